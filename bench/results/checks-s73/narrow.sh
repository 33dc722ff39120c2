#!/usr/bin/env bash
# Session 73, the narrow-kernel probe (one GPU): run from the repository
# root; its output is narrow-out/narrow.txt.
set -u
cd bench/probes/atb && nvcc -O3 -arch=sm_90 narrow.cu -o /tmp/narrow && mkdir -p $OUT && /tmp/narrow | tee $OUT/narrow.txt
