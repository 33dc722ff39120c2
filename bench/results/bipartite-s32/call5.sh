#!/usr/bin/env bash
# Session 32, call 5: the final tree (weighted sparse bipartite aggregation
# on the bipartite graph): test_bipartite.py on CUDA.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider -rf \
    test_bipartite.py > $R/pytest-bipartite.txt 2>&1
  tail -2 $R/pytest-bipartite.txt )
t done
