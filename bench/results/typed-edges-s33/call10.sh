#!/usr/bin/env bash
# Session 33, call 10: the max-over-an-edge-DAG backward through the Python
# package, CUDA and the CPU reference against PyTorch's scatter_reduce
# amax, gradient by gradient (probe/max_grad.py).
set -u
source bench/gpu_setup.sh .carry "$OUT"
timeout 100 python3 bench/results/typed-edges-s33/probe/max_grad.py 2>&1 | tee $R/max_grad.txt
