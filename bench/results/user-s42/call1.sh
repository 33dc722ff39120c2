#!/usr/bin/env bash
# Call 1: the whole Python suite on CUDA, 8 shards over the machine's GPUs (
# bench/pytest_shard.py), test_nn_cuda.py included. Outputs:
# summary.txt (each shard's closing line, the failures) and out.tgz. (As run,
# this block was inline, without -rs; bench/cuda_suite.sh holds it now.)
set -u
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
nvidia-smi -L >> $S
t pytest
bash bench/cuda_suite.sh $W $S 8 500
t done
cp $R/progress.txt $W/; tar czf $R/out.tgz -C $W .
