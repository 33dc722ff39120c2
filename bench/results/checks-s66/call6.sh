#!/usr/bin/env bash
# Session 66, call 6 (one GPU), HEAD's gnn-run and gnn-opt: compute-sanitizer
# racecheck on the f16 kernel families (not reached in session 65), chunks of
# 8,192 then 4, as far as the call's time goes.
mkdir -p /tmp/bin
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
source bench/gpu_setup.sh .carry $OUT >/dev/null 2>&1
for c in 8192 4; do
  TOOLS=racecheck CHUNKS="$c" TYPES="f16" timeout ${LIMIT:-140} bash test/Integration/sanitize.sh \
    /tmp/bin/gnn-run "$D" musae-github /tmp/bin/gnn-opt > $OUT/racecheck-f16-$c.txt 2>&1
done
grep -c "^PASS" $OUT/racecheck-f16-*.txt; grep -h "FAIL\|hazard" $OUT/racecheck-f16-*.txt | grep -v " 0 hazard" | head; tail -3 $OUT/racecheck-f16-*.txt
