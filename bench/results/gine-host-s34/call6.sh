#!/usr/bin/env bash
# Session 34, call 6: bench/gine.py eager and under torch.compile (both
# models, default mode), one process each, on the final code.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t eager
timeout 200 python3 bench/gine.py $D/qm9 --rounds 3 > $R/gine-eager.txt 2>&1; tail -6 $R/gine-eager.txt
t compile
timeout 330 python3 bench/gine.py $D/qm9 --rounds 3 --compile > $R/gine-compile.txt 2>&1; tail -6 $R/gine-compile.txt
t end
