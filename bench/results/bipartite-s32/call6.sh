#!/usr/bin/env bash
# Session 32, call 6: compute-sanitizer (memcheck, initcheck) over gnn-run
# on the bipartite layers, forward and training step (--grad), with more
# sources than destinations and fewer, and a hub row; each run also checked
# against the reference.
set -u
source bench/gpu_setup.sh .carry "$OUT"
RUN=$B/bin/gnn-run
pass=0; fail=0
for run in "memcheck bipartite:src=3000,dst=400,edges=20000" \
           "memcheck bipartite:src=300,dst=2000,edges=20000" \
           "memcheck bipartite:src=50,dst=4,edges=30000,alpha=1.3" \
           "initcheck bipartite:src=3000,dst=400,edges=20000"; do
  tool=${run%% *}; g=${run#* }
  {
    for f in test/Integration/Inputs/bipartite/*.mlir; do
      for grad in "" "--grad"; do
        n=$(basename $f .mlir)
        out=$(timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 \
              $RUN $f --graph="$g" --backend=cuda --reps=1 --warmup=0 $grad 2>&1)
        rc=$?
        errs=$(printf '%s\n' "$out" | sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' | tail -1)
        if [ $rc -eq 0 ] && [ "${errs:-x}" = "0" ]; then
          pass=$((pass + 1)); echo "ok   $tool $n $g $grad"
        else
          fail=$((fail + 1)); echo "FAIL $tool $n $g $grad rc=$rc errors=${errs:-?}"
          printf '%s\n' "$out" | grep -E "Invalid|uninitialized|error" | head -5
        fi
      done
    done
  }
done > $R/sanitize.txt 2>&1
echo "$pass passed, $fail failed" >> $R/sanitize.txt
tail -1 $R/sanitize.txt; grep FAIL $R/sanitize.txt | head
t done
