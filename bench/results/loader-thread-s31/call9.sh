#!/usr/bin/env bash
# Session 31, call 9: the final tree's CUDA tests beyond the loader: all of
# test_nn_cuda.py (every layer through the graph cache, whose change check
# now also runs row by row for views), and test_bipartite.py on CUDA.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 420 python3 -m pytest -q -p no:cacheprovider -rf -x test_nn_cuda.py > $R/pytest-nn-cuda.txt 2>&1
  tail -3 $R/pytest-nn-cuda.txt
  GNNC_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q -p no:cacheprovider -rf \
    test_bipartite.py > $R/pytest-bipartite.txt 2>&1
  tail -2 $R/pytest-bipartite.txt )
t done
