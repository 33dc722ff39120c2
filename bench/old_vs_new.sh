#!/usr/bin/env bash
# Alternating runs of two gnn-run builds on the same ops and graphs (median
# of R repetitions each, three rounds), to tell a real difference from noise.
#   bench/old_vs_new.sh OLD_GNN_RUN NEW_GNN_RUN OPS_DIR GRAPH_FILE... > out.txt
old=$1; new=$2; ops=$3; shift 3
for gf in "$@"; do
  for op in spmm_sum spmm_unweighted max; do
    line="$(basename "$gf") $op"
    for round in 1 2 3; do
      for b in "$old" "$new"; do
        ms=$("$b" "$ops/$op.mlir" --graph="$gf" --backend=cuda --reps=50 --warmup=10 --no-check \
             | sed -n 's/.*"median_ms": \([0-9.e+-]*\).*/\1/p' | head -1)
        line="$line $ms"
      done
    done
    echo "$line"
  done
done
