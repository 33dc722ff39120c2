#!/usr/bin/env bash
# Session 58, call 2 (one GPU): light-row kernels in blocks of 64 threads
# (gnn::kRowBlock; the split kernels keep 256) against call 1's binary (the
# one-exponential softmax, blocks of 256). (1) checks.txt: the new binary
# against the reference: run-examples.sh (every layer), run-half.sh, the
# scoreboard functions --grad on a power-law graph with and without a
# split, run-nan.sh; (2) ab.txt: scoreboard graphs, spmm sum, max, GATv2,
# GT, f32 and bf16, forward (two rounds alternating) and forward+backward;
# (3) reddit.txt: reddit-like spmm sum and GATv2 forward, both
# binaries, and the new binary's per-step times of the GATv2.
source bench/results/softmax-s58/common.sh gnn-run gnn-run-exp1 gnn-run-old
prog graphs
dump pubmed musae-github blogcatalog arxiv-like
prog ab
for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum max gatv2 gt; do
  echo "$g $set $op fwd exp1=$(one gnn-run-exp1 $set $op $g --reps=30 --warmup=5) new=$(one gnn-run $set $op $g --reps=30 --warmup=5) exp1=$(one gnn-run-exp1 $set $op $g --reps=30 --warmup=5) new=$(one gnn-run $set $op $g --reps=30 --warmup=5)" >> $OUT/ab.txt
done; done; done
prog ab-grad
for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum gatv2; do
  echo "$g $set $op grad exp1=$(one gnn-run-exp1 $set $op $g --reps=20 --warmup=3 --grad) new=$(one gnn-run $set $op $g --reps=20 --warmup=3 --grad)" >> $OUT/ab.txt
done; done; done
reddit_ab gnn-run-exp1 exp1 gatv2 spmm_sum
timeout 90 gnn-run $P/gnnc_ops_bf16/gatv2.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=5 --warmup=2 --profile-steps 2>>$R/err.txt |
  python3 -c 'import json,sys
c=json.load(sys.stdin)["cuda"]; [print("  bf16 gatv2 step", s["step"], "%.3f" % s["median_ms"]) for s in c.get("step_ms", [])]' >> $OUT/reddit.txt 2>>$R/err.txt
prog checks
for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum spmm_unweighted max gatv2 gt; do for flag in "" --grad; do
  chk "$set $op ${flag:-fwd} powerlaw" gnn-run $P/$set/$op.mlir --graph=$PL $flag
  chk "$set $op ${flag:-fwd} powerlaw split=32 chunks=4" gnn-run $P/$set/$op.mlir --graph=$PL --split=32 --max-chunks=4 $flag
done; done; done
grep -c PASS $OUT/checks.txt >> $OUT/progress.txt; grep -c FAIL $OUT/checks.txt >> $OUT/progress.txt
# Call 1's one failure (mixed_bf16_f32 @f --grad on the power-law graph):
# HEAD's binary (gnn-run-old) and the new one on the same check.
for b in gnn-run-old gnn-run; do
  chk "$b mixed_bf16_f32 @f --grad powerlaw" $b test/Integration/Inputs/mixed_bf16_f32.mlir --function=f --graph=$PL --grad
  chk "$b mixed_bf16_f32 @f fwd powerlaw" $b test/Integration/Inputs/mixed_bf16_f32.mlir --function=f --graph=$PL
  chk "$b mixed_bf16_f32 @f --grad cora" $b test/Integration/Inputs/mixed_bf16_f32.mlir --function=f --graph=$D/cora --grad
done
timeout 150 bash test/Integration/run-examples.sh /tmp/bin/gnn-run $D cora "powerlaw:nodes=20000,edges=400000,seed=3" "batch:graphs=64,min=5,max=40,seed=2" > $R/examples.txt 2>&1; tail -1 $R/examples.txt >> $OUT/checks.txt
timeout 150 bash test/Integration/run-half.sh /tmp/bin/gnn-run $D > $R/half.txt 2>&1; tail -1 $R/half.txt >> $OUT/checks.txt
timeout 120 bash test/Integration/run-nan.sh /tmp/bin/gnn-run > $R/nan.txt 2>&1; tail -1 $R/nan.txt >> $OUT/checks.txt
grep -i fail $R/examples.txt $R/half.txt $R/nan.txt | head -20 >> $OUT/checks.txt
prog done
tail -5 $R/err.txt > $OUT/err-tail.txt
