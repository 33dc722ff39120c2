#!/usr/bin/env bash
# Session 31, call 2: the loader's thread also builds the graphs the model
# asks of each batch (the whole batch's, or the trimmed layers' prefixes).
# The loader's CUDA tests; then bench/probes/loader/prefetch.py: prefetch 0
# against 1, untrimmed and trimmed, interleaved epoch by epoch in one
# process.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt )
t probe
timeout 400 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
tail -6 $R/prefetch.txt
t done
