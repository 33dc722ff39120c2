#!/usr/bin/env bash
# Interleaved A/B timing of one op on one graph with two gnn-run builds, to
# tell a small difference from noise: ROUNDS rounds (default 3) of A then B,
# each a median of 200 CUDA-event timings after 20 warm-up runs, with the
# per-step medians (--profile-steps). Needs a GPU.
#
#   bench/ab.sh GNN_RUN_A GNN_RUN_B OP.mlir GRAPH [ROUNDS]
set -u
a="$1"; b="$2"; op="$3"; graph="$4"; rounds="${5:-3}"
for i in $(seq "$rounds"); do
  for run in "$a" "$b"; do
    "$run" "$op" --graph="$graph" --backend=cuda --reps=200 --warmup=20 \
      --no-check --profile-steps > /tmp/ab.json 2>/dev/null || { echo "$run failed"; continue; }
    python3 - "$run" <<'PY'
import json, sys
c = json.load(open("/tmp/ab.json"))["cuda"]
steps = ", ".join(f"{s['step']} {s['median_ms']:.4f}" for s in c.get("step_ms", []))
print(f"{sys.argv[1]}: {c['median_ms']:.4f} ms ({steps})")
PY
  done
done
