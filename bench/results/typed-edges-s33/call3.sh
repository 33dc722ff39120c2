#!/usr/bin/env bash
# Session 33, call 3: after the autodiff fix (a backward's edge-count query
# answered by an edge argument it reads, so RGCN's backward no longer
# recomputes the relation gather and keeps the [N, R, out] rows) and the
# placeholder for inputs a backward does not read (now fake tensors under
# torch.compile). bench/rgcn.py on the three graphs of calls 1-2, the
# Python tests on CUDA (no -x: every failure listed).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t bench
timeout 200 python3 bench/rgcn.py --relations 90 1000 > $R/rgcn.txt 2>&1; tail -12 $R/rgcn.txt
timeout 120 python3 bench/rgcn.py --nodes 20000 --relations 90 > $R/rgcn-dense.txt 2>&1; tail -6 $R/rgcn-dense.txt
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 400 python3 -m pytest -q -p no:cacheprovider -rf \
    test_typed.py test_rgcn.py test_nn_cuda.py test_autocast.py test_bipartite.py test_hgt.py > $R/pytest.txt 2>&1
  tail -4 $R/pytest.txt )
t end
