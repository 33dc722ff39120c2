#!/usr/bin/env bash
# The heavy-row split threshold against time, per graph and op, on the GPU:
# what gnn::chooseSplit's rules (include/gnn/Analysis/Schedule.h) were
# calibrated on. Each cell is gnn-run's median of 30 CUDA-event timings
# after 5 warm-up runs, with --split=T forcing the threshold of every
# aggregation and attention kernel ("chosen" is the default rule).
#   bench/split_sweep.sh GNN_RUN GRAPH_FILE...   (graph files: the peers'
#   dump_graph.py output, or any --graph spec)
# Prints one line per (graph, op): "graph op chosen=ms 1024=ms ... 32=ms".
# OPS (the ops), OPS_DIR (their folder: gnnc_ops_bf16 for bf16),
# THRESHOLDS (default "chosen 1024 512 256 128 64 32"; 0 = no split; T:M
# = threshold T with --max-chunks=M, chunks of ceil(edges / M) positions) and
# GRAD=1 (forward+backward, --grad: each cell the training step's median)
# select the cells.
set -euo pipefail
run=${1:?usage: split_sweep.sh GNN_RUN GRAPH...}; shift
ops=${OPS:-spmm_sum spmm_unweighted max gatv2}
opsdir=${OPS_DIR:-$(dirname "$0")/../../shared/bench/peers/gnnc_ops}
grad=""; key=median_ms
[ "${GRAD:-0}" = 1 ] && { grad="--grad"; key=fwdbwd_median_ms; }
for g in "$@"; do
  name=$(basename "$g"); name=${name%.txt}; name=${name%.npy}
  for op in $ops; do
    line="$name $op"
    for t in ${THRESHOLDS:-chosen 1024 512 256 128 64 32}; do
      flag=""; [ "$t" = chosen ] || flag="--split=${t%%:*}"
      case $t in *:*) flag="$flag --max-chunks=${t#*:}";; esac
      ms=$("$run" "$opsdir/$op.mlir" --graph="$g" --backend=cuda --no-check \
             --reps=30 --warmup=5 $flag $grad |
           python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["cuda"][sys.argv[1]])' $key)
      line="$line $t=$ms"
    done
    echo "$line"
  done
done
