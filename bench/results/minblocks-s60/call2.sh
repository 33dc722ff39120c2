#!/usr/bin/env bash
# Session 60, call 2 (one GPU): call 1 found more registers for the final
# kernel slower (occupancy, not spills, decides). The other lever on
# reddit-like (mean degree 492): the heavy-row threshold. Rows above it take
# two passes (partial, final: both gather the rows); session 55 swept only
# 32-512 there. gnn-run --split=S forces S; forward medians and per-step
# times, committed kernels (the experimental GNNC_XMINB unset).
source bench/results/softmax-s58/common.sh gnn-run
rd() { timeout 90 gnn-run $P/$1/$2.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps --split=$3 2>>$R/err.txt |
  python3 -c 'import json,sys
c=json.load(sys.stdin)["cuda"]; print(sys.argv[1], "median %.3f" % c["median_ms"], " ".join("%s=%.3f" % (s["step"], s["median_ms"]) for s in c.get("step_ms", [])))' "$1 $2 split=$3" >> $OUT/reddit.txt 2>>$R/err.txt; }
prog reddit-dump
timeout 90 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $R/graphs.txt 2>&1
prog reddit
for s in 512 2048 8192 1024 4096; do rd gnnc_ops_bf16 gatv2 $s; done
for s in 512 2048 8192; do rd gnnc_ops gatv2 $s; rd gnnc_ops_bf16 gt $s; done
for s in 512 2048 8192; do rd gnnc_ops_bf16 spmm_sum $s; rd gnnc_ops spmm_sum $s; done
prog done
tail -5 $R/err.txt > $OUT/err-tail.txt
