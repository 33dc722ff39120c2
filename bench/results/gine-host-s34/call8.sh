#!/usr/bin/env bash
# Session 34, call 8: the RGCN tests on CUDA after the featureless-index
# checks (a target index past root's rows was an out-of-bounds index on the
# device) and FastRGCNConv's own name in its errors.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 250 python3 -m pytest -q -p no:cacheprovider -rf \
    test_rgcn.py test_typed.py > $R/pytest.txt 2>&1
  tail -3 $R/pytest.txt )
t end
