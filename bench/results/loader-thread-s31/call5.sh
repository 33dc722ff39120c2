#!/usr/bin/env bash
# Session 31, call 5: after call 3, the first call on a view built ahead no
# longer waits for the device (its change check now runs row by row on the
# device instead of torch.equal). The loader's and the graph cache's CUDA
# tests; bench/probes/loader/prefetch.py (4 rounds, phases).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt
  timeout 200 python3 -m pytest -q -p no:cacheprovider -rf test_nn_cuda.py \
    -k "synchronise or sorted or sparse or cached or write or stale or version" > $R/pytest-nn-cuda.txt 2>&1
  tail -2 $R/pytest-nn-cuda.txt )
t probe
ROUNDS=4 PHASES=1 timeout 300 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|^p[01]" $R/prefetch.txt
t done
