#!/usr/bin/env bash
# Call 3: call 2's four CUDA failures after their fixes (26ff125), and the
# files they are in.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
cd python/tests && GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider \
  test_typed.py test_bipartite.py "test_nn.py::test_coo_adjacency_read_as_pyg_whatever_its_coalesced_flag" \
  > $R/pytest.txt 2>&1; cd ../..
t done
