#!/usr/bin/env bash
# Call 3: why the bf16 max aggregation's forward+backward is slower than
# f32's (session 42 call 2: musae-github 0.250 against 0.195 ms, arxiv-like
# 0.920 against 0.717): gnn-run --grad --profile-steps on both precisions,
# and ncu's per-kernel summary of one bf16 and one f32 training step.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G
for g in musae-github arxiv-like blogcatalog; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
for g in musae-github arxiv-like blogcatalog; do
  for dt in bf16 f32; do
    f=$P/gnnc_ops_bf16/max.mlir; [ $dt = f32 ] && { sed 's/bf16/f32/g' $f > /tmp/max-f32.mlir; f=/tmp/max-f32.mlir; }
    t "$g $dt"
    echo "== $g $dt" >> $R/steps.txt
    timeout 60 $B/bin/gnn-run $f --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 --profile-steps >> $R/steps.txt 2>&1
  done
done
t ncu
for dt in bf16 f32; do
  f=$P/gnnc_ops_bf16/max.mlir; [ $dt = f32 ] && f=/tmp/max-f32.mlir
  timeout 120 ncu --print-summary per-kernel --metrics gpu__time_duration.sum,dram__bytes.sum,smsp__inst_executed.sum $B/bin/gnn-run $f --graph=$G/musae-github.npy --backend=cuda --grad --no-check --reps=2 --warmup=0 > $R/ncu-$dt.txt 2>&1
done
t done
