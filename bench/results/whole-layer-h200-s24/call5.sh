#!/usr/bin/env bash
# Session 24 call 5: GCNConv / SAGEConv fwd+bwd on a large random graph,
# A (HEAD) against C (whole-layer functions), kernels profiled.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
for s in A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/large.txt
  PYTHONPATH=$pp timeout 80 python3 bench/probes/hostsplit/large.py --profile >> $R/large.txt 2>&1
done
grep -E "==|fwd\+bwd" $R/large.txt
