#!/usr/bin/env bash
# Session 34, call 2: GINEConv with its edge projection (`lin`) inside the
# gnn function: the CUDA tests of GINE, then the step's bounds probe and
# bench/gine.py (issue 31's 2x).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider -rf -k "gine or GINE" \
    test_nn_cuda.py test_autocast.py test_bipartite.py test_nn.py > $R/pytest.txt 2>&1
  tail -3 $R/pytest.txt )
t bounds
timeout 200 python3 bench/probes/host/gine_bounds.py $D/qm9 --iters 200 --rounds 3 > $R/bounds.txt 2>&1
tail -10 $R/bounds.txt
t bench
timeout 150 python3 bench/gine.py $D/qm9 --rounds 3 > $R/gine.txt 2>&1; tail -6 $R/gine.txt
t end
