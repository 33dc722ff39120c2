#!/usr/bin/env bash
# Session 33, call 5: issue 31's heterogeneous acceptance again at this
# session's code (the bipartite functions of session 32 replaced the paths
# to_hetero's SAGE and HGT ran on): bench/hetero_sage.py, the ogbn-mag-
# shaped graph, 10 full-graph Adam steps, both loss curves and the
# forward+backward time per step.
set -u
source bench/gpu_setup.sh .carry "$OUT"
for m in sage hgt; do
  t $m
  timeout 270 python3 bench/hetero_sage.py --model $m > $R/hetero-$m.txt 2>&1; tail -8 $R/hetero-$m.txt
done
t end
