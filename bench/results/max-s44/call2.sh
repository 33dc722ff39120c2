#!/usr/bin/env bash
# Call 2: GINE on QM9 batches came out at 0.91x PyG's forward+backward in
# call 1 (session 37: 1.15-1.20x). Where its step goes now: the profiler's
# kernels per step (gine_kernels.py), the bounds (gine_bounds.py: gnnc's ops
# stubbed, the shared part alone), and bench/gine.py twice more.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t kernels
timeout 150 python3 bench/probes/host/gine_kernels.py $D/qm9 > $R/kernels.txt 2>&1
t bounds
timeout 200 python3 bench/probes/host/gine_bounds.py $D/qm9 > $R/bounds.txt 2>&1
t gine
for i in 1 2; do timeout 150 python3 bench/gine.py $D/qm9 >> $R/gine.txt 2>&1; done
t done
