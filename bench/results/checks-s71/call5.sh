#!/usr/bin/env bash
# Session 71, call 5 (one GPU): the final tree's CUDA tests after the
# weighted GCNConv plan: test_nn_cuda.py whole, and test_autocast.py's GCN
# cases with GNNC_TEST_DEVICE=cuda.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
t tests
(cd python/tests && timeout 150 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
  > "$R/pytest.txt" 2>&1)
t autocast
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 70 python3 -m pytest -q -p no:cacheprovider \
  test_autocast.py -k "gcn or GCN" > "$R/autocast.txt" 2>&1)
t done
cat "$R/progress.txt"; tail -2 "$R/pytest.txt"; tail -2 "$R/autocast.txt"
