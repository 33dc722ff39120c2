#!/usr/bin/env bash
# Session 51, call 1 (one GPU): where GINE's training step on QM9 batches
# (bench/gine.py's model) spends its host time now: bench/gine.py (two
# rounds), the forward/backward split and torch.profiler's tables
# (gine_step.py), the bounds (gine_bounds.py), and gine.py pinned to one CPU.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t gine
python3 bench/gine.py "$D/qm9" --rounds 2 > "$R/gine.txt" 2>&1
t step
OUT=$R python3 bench/probes/host/gine_step.py "$D/qm9" > "$R/step.txt" 2>&1
gzip -f "$R"/trace-gnnc.json; rm -f "$R"/trace-pyg.json
t bounds
python3 bench/probes/host/gine_bounds.py "$D/qm9" > "$R/bounds.txt" 2>&1
t pinned
taskset -c 3 python3 bench/gine.py "$D/qm9" --rounds 2 > "$R/gine-pinned.txt" 2>&1
t done
