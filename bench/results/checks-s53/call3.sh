#!/usr/bin/env bash
# Session 53, call 3 (one GPU): the whole Python suite on CUDA again (8
# shards, bench/cuda_suite.sh) on the final code: the loader test fixed after
# call 2, the fixes from the audits (folded biases, GCNConv cached copy,
# cache eviction under threads, GAT shapes, gnnc.compile arguments).
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
