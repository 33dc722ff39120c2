#!/usr/bin/env bash
# Session 72, call 5 (one GPU): the weight-gradient GEMM probe
# (bench/probes/atb/atb.cu): the library's atbSlices against blocks of 2
# and 4 groups of warps, and cuBLAS.
set -u
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/device.txt"
nvcc -O3 -arch=sm_90 -lcublas bench/probes/atb/atb.cu -o /tmp/atb > "$OUT/build.txt" 2>&1
timeout 240 /tmp/atb > "$OUT/atb.txt" 2>&1
cat "$OUT/build.txt" "$OUT/atb.txt"
