#!/usr/bin/env bash
# Session 58, call 1 (one GPU): the online softmax with one exponential per
# edge (LowerAttention's updateState/mergeStates) against HEAD's binary.
# (1) checks.txt: the new binary against the reference, GATv2 and GT
# (scoreboard functions) f32/bf16, forward and --grad, on a power-law graph
# with and without --split=32, and every attention example (GAT, GATv2,
# Transformer, AGNN) --grad on cora, a power-law graph and a batch;
# (2) nan.txt: test/Integration/run-nan.sh (NaN, +-inf inputs against the
# reference); (3) ab.txt: scoreboard graphs, GATv2 and GT, f32 and bf16,
# forward and forward+backward, old and new alternating; (4) reddit.txt:
# reddit-like GATv2/GT forward, f32 and bf16, old and new, and the new
# binary's per-step times; (5) ncu.txt: Nsight Compute of the bf16 and f32
# GATv2 kernels on reddit-like (occupancy, stalls, throughput).
source bench/results/softmax-s58/common.sh gnn-run gnn-run-old
prog graphs
dump pubmed musae-github blogcatalog arxiv-like
prog checks
for set in gnnc_ops gnnc_ops_bf16; do for op in gatv2 gt; do for flag in "" --grad; do
  chk "$set $op ${flag:-fwd} powerlaw" gnn-run $P/$set/$op.mlir --graph=$PL $flag
  chk "$set $op ${flag:-fwd} powerlaw split=32" gnn-run $P/$set/$op.mlir --graph=$PL --split=32 $flag
  chk "$set $op ${flag:-fwd} powerlaw split=32 chunks=4" gnn-run $P/$set/$op.mlir --graph=$PL --split=32 --max-chunks=4 $flag
done; done; done
for e in gat gatv2 transformer agnn; do
  for spec in $D/cora "$PL" "batch:graphs=40,min=5,max=30,seed=2"; do
    chk "example $e --grad $spec" gnn-run examples/$e.mlir --graph=$spec --grad
  done
  chk "example $e --grad split=32" gnn-run examples/$e.mlir --graph=$PL --grad --split=32
done
for f in attention_dropout attention_lse attention_odd_heads mixed_bf16_f32; do
  for fn in $(grep -o "func.func @[a-z_0-9]*" test/Integration/Inputs/$f.mlir | sed 's/func.func @//'); do
    chk "$f @$fn --grad" gnn-run test/Integration/Inputs/$f.mlir --function=$fn --graph=$PL --grad
  done
done
grep -c PASS $OUT/checks.txt >> $OUT/progress.txt; grep -c FAIL $OUT/checks.txt >> $OUT/progress.txt
prog nan
timeout 150 bash test/Integration/run-nan.sh /tmp/bin/gnn-run > $OUT/nan.txt 2>&1
tail -1 $OUT/nan.txt >> $OUT/progress.txt
prog ab
for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for op in gatv2 gt; do
  echo "$g $set $op fwd old=$(one gnn-run-old $set $op $g --reps=50 --warmup=10) new=$(one gnn-run $set $op $g --reps=50 --warmup=10) old=$(one gnn-run-old $set $op $g --reps=50 --warmup=10) new=$(one gnn-run $set $op $g --reps=50 --warmup=10)" >> $OUT/ab.txt
  echo "$g $set $op grad old=$(one gnn-run-old $set $op $g --reps=30 --warmup=5 --grad) new=$(one gnn-run $set $op $g --reps=30 --warmup=5 --grad)" >> $OUT/ab.txt
done; done; done
reddit_ab gnn-run-old old gatv2 gt
for set in gnnc_ops_bf16 gnnc_ops; do
  timeout 90 gnn-run $P/$set/gatv2.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=5 --warmup=2 --profile-steps 2>>$R/err.txt |
    python3 -c 'import json,sys
c=json.load(sys.stdin)["cuda"]; print(sys.argv[1], "gatv2 stats", c.get("stats_option")); [print("  ", s["step"], "%.3f" % s["median_ms"]) for s in c.get("step_ms", [])]' $set >> $OUT/reddit.txt 2>>$R/err.txt
done
prog ncu
for set in gnnc_ops_bf16 gnnc_ops; do
  echo "=== $set gatv2 reddit-like" >> $OUT/ncu.txt
  timeout 120 ncu --kernel-name regex:attention --launch-count 3 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
    gnn-run $P/$set/gatv2.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=1 --warmup=0 >> $OUT/ncu.txt 2>&1
done
prog done
