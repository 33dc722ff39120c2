#!/usr/bin/env bash
# Session 72, call 2 (one GPU): GINE's training step split into host and
# device time, per side, without a profiler (gine_split.py).
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
t split
timeout 200 python3 bench/probes/host/gine_split.py "$D/qm9" > "$R/split.txt" 2>&1
t done
cat "$R/progress.txt"; cat "$R/split.txt"
