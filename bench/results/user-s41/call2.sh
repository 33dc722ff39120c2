#!/usr/bin/env bash
# Call 2: where gnnc's GATConv step goes against its GATv2Conv's on the
# larger graphs (call 1: GAT slower than GATv2 at 128 channels on every
# graph but pubmed): torch.profiler's device time per kernel of one layer
# step, and gnn-run's per-step times of the two layer functions (IR dumped
# from the layers, ir/).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t prof
for g in ego-twitter blogcatalog; do
  timeout 100 python3 bench/probes/attention/gat_vs_gatv2.py $D $g 128 > $R/prof-$g.txt 2>&1
done
t gnnrun
for g in ego-twitter blogcatalog; do for f in gat gatv2; do
  for flags in "" "--grad"; do
    timeout 60 $B/bin/gnn-run bench/results/user-s41/ir/${f}_128.mlir --graph=$D/$g --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps $flags > $R/gnnrun-$g-$f${flags:+-grad}.json 2>> $R/gnnrun-log.txt
  done
done; done
t done
