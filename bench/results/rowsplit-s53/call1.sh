#!/usr/bin/env bash
# Session 53, call 1 (one GPU): the row split's variants
# (bench/probes/rowsplit/rowsplit.cu, built here) and GINE's training step
# per kernel as it stands (bench/probes/host/gine_kernels.py) and its
# speed against PyG (bench/gine.py).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t rowsplit
.carry/bin/rowsplit > "$R/rowsplit.jsonl" 2> "$R/rowsplit.err"
t kernels
python3 bench/probes/host/gine_kernels.py "$D/qm9" > "$R/kernels.txt" 2>&1
t gine
python3 bench/gine.py "$D/qm9" --rounds 3 > "$R/gine.txt" 2>&1
t done
