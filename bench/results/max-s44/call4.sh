#!/usr/bin/env bash
# Call 4: the whole Python suite on CUDA with this session's package (its
# CPU path, the reference the CUDA tests compare with, runs generic bodies
# in batches now), then bench/gine.py with 1 and 3 layers, 5 rounds each.
set -u
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W
t suite
bash bench/cuda_suite.sh $W $R/summary.txt 8 330
tar czf $R/pytest-logs.tgz -C $W .
t gine
for l in 1 3; do timeout 150 python3 bench/gine.py $D/qm9 --layers $l --rounds 5 >> $R/gine.txt 2>&1; done
t done
