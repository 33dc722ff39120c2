#!/usr/bin/env bash
# Session 33, call 4: where GINEConv's training step on QM9 batches spends
# device time (issue 31's 2x is not met), and bench/gine.py as it stands.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t probe
timeout 200 python3 bench/probes/host/gine_kernels.py $D/qm9 > $R/gine-kernels.txt 2>&1
grep -E "^nodes|step|Name|^-" $R/gine-kernels.txt | head -8
grep -A20 "^gnnc:" $R/gine-kernels.txt | head -24
t bench
timeout 150 python3 bench/gine.py $D/qm9 --rounds 3 > $R/gine.txt 2>&1; tail -6 $R/gine.txt
t end
