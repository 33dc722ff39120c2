#!/usr/bin/env bash
# Session 56, call 1 (one GPU): the bf16/f16 max backward pulled along the
# edges (gnn-run) against HEAD's routed one (gnn-run-old). (1) checks
# against the reference: spmm max bf16/f16 --grad on cora, a power-law graph
# (split rows, also --max-chunks=4) and the scoreboard's small graphs;
# (2) timing, old and new alternating, bf16 and f32 max --grad on the five
# scoreboard graphs, and the new step's kernels (--profile-steps); (3) the
# runtime's GPU gtests and (4) the whole Python suite on CUDA (8 shards):
# the first GPU run of 9dfc653 (the light-row counts removed).
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-run-old GNNRuntimeTests; do
  xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v
done
source bench/results/maxpull-s56/common.sh
for g in blogcatalog arxiv-like; do for b in gnn-run-old gnn-run; do
  $b .carry/peers/gnnc_ops_bf16/max.mlir --graph=/tmp/g/$g.npy --backend=cuda --no-check --reps=20 --warmup=5 --grad --profile-steps > $R/profile-$g-$b.json 2>>$R/err.txt
done; done
t gtest
GNNC_DATASETS=$D timeout 120 GNNRuntimeTests --gtest_filter='Gpu*' > $R/gtest.txt 2>&1; echo "rc=$?" >> $R/gtest.txt
tail -3 $R/gtest.txt
t pytest
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
bash bench/cuda_suite.sh $W $S 8 280
cat $S
t done
tar czf $OUT/r.tgz -C /tmp r w
