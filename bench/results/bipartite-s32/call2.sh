#!/usr/bin/env bash
# Session 32, call 2: nothing of one node set changed: every example layer
# and the fused chains against the reference on graphs of one node set
# (run-examples.sh), all of test_nn_cuda.py; then where the fused trimmed
# step's host time goes (cProfile of 40 steps, p1tf).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t examples
timeout 200 test/Integration/run-examples.sh $B/bin/gnn-run /nonexistent \
  "powerlaw:nodes=169343,edges=2332486,seed=1" "batch:graphs=3000,seed=2" > $R/examples.txt 2>&1
tail -1 $R/examples.txt; grep FAIL $R/examples.txt | head
t pytest
( cd python/tests
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rf -x test_nn_cuda.py > $R/pytest-nn-cuda.txt 2>&1
  tail -3 $R/pytest-nn-cuda.txt )
t profile
ROUNDS=0 PHASES=0 VARIANTS=p1tf PROFILE=p1tf timeout 120 python3 bench/probes/loader/prefetch.py > $R/profile.txt 2>&1
grep -E "Error|error" $R/profile.txt | head -5
t done
