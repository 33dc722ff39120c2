#!/usr/bin/env bash
# Session 53, call 2 (one GPU): the whole Python suite on CUDA (8 shards,
# bench/cuda_suite.sh) on this session's code, with the tools on PATH:
# sessions 52's and 53's Python changes (loader prefetch and attribute
# refresh, per-output allocations, the Transformer/AGNN plans, the
# MessagePassing class attributes, to_hetero pickling) had not run on a GPU.
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-opt gnn-translate; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
t pytest
bash bench/cuda_suite.sh $W $S 8 420
t done
cp $W/pytest-*.txt $R/
