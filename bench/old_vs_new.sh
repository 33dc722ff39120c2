#!/usr/bin/env bash
# Alternating forward runs of two (or more) gnn-run builds on the same ops
# and graphs (median of 50 repetitions after 10 warm-up runs each, ROUNDS
# rounds), to tell a real difference from noise. One line per (graph, op):
# the medians of each round, builds in the order given.
#   [OPS=spmm_sum,max] [ROUNDS=3] [MORE="GNN_RUN..."] \
#     bench/old_vs_new.sh OLD_GNN_RUN NEW_GNN_RUN OPS_DIR GRAPH_FILE... > out.txt
# MORE adds builds after NEW (e.g. a variant); OPS defaults to spmm_sum,
# spmm_unweighted and max.
old=$1; new=$2; ops=$3; shift 3
for gf in "$@"; do
  for op in $(echo "${OPS:-spmm_sum,spmm_unweighted,max}" | tr , ' '); do
    line="$(basename "$gf") $op"
    for round in $(seq "${ROUNDS:-3}"); do
      for b in "$old" "$new" ${MORE:-}; do
        ms=$("$b" "$ops/$op.mlir" --graph="$gf" --backend=cuda --reps=50 --warmup=10 --no-check \
             | sed -n 's/.*"median_ms": \([0-9.e+-]*\).*/\1/p' | head -1)
        line="$line $ms"
      done
    done
    echo "$line"
  done
done
