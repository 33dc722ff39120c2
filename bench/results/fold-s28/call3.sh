#!/usr/bin/env bash
# Session 28, call 3: bench/probes/fold/layers_cuda.py under compute-sanitizer
# (memcheck, racecheck); call 2's run stopped at the probe's own bug (a
# leaf tensor made from a tensor that required grad), before any kernel.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t sanitize
for tool in memcheck racecheck; do
  echo "== $tool" >> $R/sanitize.txt
  timeout 200 compute-sanitizer --tool $tool python3 bench/probes/fold/layers_cuda.py >> $R/sanitize.txt 2>&1
done
grep -E "==|PASS|FAIL|passed|ERROR SUMMARY|RACECHECK SUMMARY" $R/sanitize.txt
t end
