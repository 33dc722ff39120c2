#!/usr/bin/env bash
# Session 31, call 6: the committed tree (06be34c). The loader's CUDA tests
# (a write behind the version counter after the graphs were built ahead
# among them); the probe with fused Adam as a fifth variant; then py-spy
# (carried: .carry/bin/py-spy) on a trimmed prefetch=1 run, sampling only
# threads that hold the GIL, to see how the GIL is shared between the
# training loop's thread and the loader's.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt )
t probe
ROUNDS=3 PHASES=1 VARIANTS=p0,p1,p0t,p1t,p1tf timeout 250 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|^p[01]" $R/prefetch.txt
t pyspy
ROUNDS=6 PHASES=0 VARIANTS=p1t timeout 120 $B/bin/py-spy record --gil --threads --format raw \
  -r 400 -o $R/pyspy-gil.txt -- python3 bench/probes/loader/prefetch.py > $R/pyspy-run.txt 2>&1
echo "py-spy exit $?"; tail -3 $R/pyspy-run.txt
ROUNDS=6 PHASES=0 VARIANTS=p1t timeout 120 $B/bin/py-spy record --threads --idle --format raw \
  -r 400 -o $R/pyspy-all.txt -- python3 bench/probes/loader/prefetch.py > $R/pyspy-run2.txt 2>&1
echo "py-spy exit $?"; ls -la $R
t done
