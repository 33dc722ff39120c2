#!/usr/bin/env bash
# Call 1: where reddit-like's attention time goes and whether the heavy-row
# threshold chosen for it (gnn::chooseSplit) is right there; the split's
# rows wholly inside a long chunk are walked one at a time by the whole
# block (a block reduction per row), rows at most `split` long by a team
# each. --split sweep (f32 and bf16, spmm_sum and gatv2, with
# --profile-steps), ncu on the bf16/f32 GATv2 kernels, and arxiv-like's
# bf16 spmm (issue 29's 1.44x case) over thresholds.
set -u
[ -x .carry/bin/gnn-run ] || { xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run; }
source bench/gpu_setup.sh .carry "$OUT"
W=$R; P=$B/peers; G=/tmp/graphs48; mkdir -p $G
run() { timeout 60 $B/bin/gnn-run "$@" --backend=cuda --reps=20 --warmup=5 --no-check; }
t dump
timeout 90 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $W/log.txt 2>&1
timeout 60 python3 $P/dump_graph.py arxiv-like $D $G/arxiv-like.npy >> $W/log.txt 2>&1
t reddit-sweep
for dt in float32 bfloat16; do
  set=gnnc_ops; [ $dt = bfloat16 ] && set=gnnc_ops_bf16
  for op in gatv2 spmm_sum; do
    for s in -1 128 512 2048; do
      echo "== $dt $op split=$s" >> $W/reddit-sweep.txt
      run $P/$set/$op.mlir --graph=$G/reddit-like.npy --split=$s --profile-steps > $W/r.json 2>> $W/log.txt
      cat $W/r.json >> $W/reddit-sweep.json
      python3 bench/results/split-s48/summ.py < $W/r.json >> $W/reddit-sweep.txt 2>&1
    done
  done
done
t arxiv-sweep
for dt in bfloat16 float32; do
  set=gnnc_ops; [ $dt = bfloat16 ] && set=gnnc_ops_bf16
  for op in spmm_sum spmm_unweighted gatv2; do
    for s in -1 32 64 128 256; do
      echo "== $dt $op split=$s" >> $W/arxiv-sweep.txt
      run $P/$set/$op.mlir --graph=$G/arxiv-like.npy --split=$s --profile-steps > $W/r.json 2>> $W/log.txt
      python3 bench/results/split-s48/summ.py < $W/r.json >> $W/arxiv-sweep.txt 2>&1
    done
  done
done
t ncu
for set in gnnc_ops_bf16 gnnc_ops; do
  timeout 120 ncu --kernel-name regex:attention_0 --launch-skip 3 --launch-count 3 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section LaunchStats --section SchedulerStats \
    $B/bin/gnn-run $P/$set/gatv2.mlir --graph=$G/reddit-like.npy --backend=cuda --reps=2 --warmup=1 --no-check \
    > $W/ncu-gatv2-$set.txt 2>&1
done
t done
