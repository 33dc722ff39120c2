#!/usr/bin/env bash
# Session 31, call 11: a loader made with device="cuda" names the device
# index (its thread starts on device 0): the loader's CUDA tests.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt )
t done
