#!/usr/bin/env bash
# Session 53, call 4 (one GPU): the whole Python suite on CUDA on the final
# code (after call 3: GCN in float16 run in float32, the GCN model's
# dropout module, edge_dim <= 0 refused).
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-opt gnn-translate; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
t pytest
bash bench/cuda_suite.sh $W $S 8 420
t done
tar czf $R/logs.tgz -C $W .
