#!/usr/bin/env bash
# Session 32, call 7: the bipartite layers under bf16 autocast on CUDA
# against float32 (bf16_check.py).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t bf16
timeout 300 python3 bench/results/bipartite-s32/bf16_check.py > $R/bf16.txt 2>&1
tail -14 $R/bf16.txt
t done
