#!/usr/bin/env bash
# Session 34, call 1: how far GINE's step can go on this host (issue 31's 2x):
# PyG, gnnc, gnnc without the edge projection, gnnc's Python alone, the
# model's shared part alone (bench/probes/host/gine_bounds.py).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t bounds
timeout 300 python3 bench/probes/host/gine_bounds.py $D/qm9 --iters 200 --rounds 3 > $R/bounds.txt 2>&1
tail -12 $R/bounds.txt
t end
