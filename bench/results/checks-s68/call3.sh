#!/usr/bin/env bash
# Session 68, call 3 (one GPU): the chunk rule of chooseSplit (aggregations
# whose heavy-row chunks, ceil(edges / 8192) positions, are longer than the
# threshold take the chunk length's power of two, at most 4x: arxiv-like
# 128 -> 512), A = e0be1a5's gnn-run, B = with the rule. Only arxiv-like
# among the scoreboard's graphs changes (the others have at most 1.05M
# edges; reddit-like's chunks are beyond 4x). The scoreboard's ops whose
# kernels the rule changes, medians of 20 after 5, A B A B (the cases cut to
# what the session's last device time held).
# B is the build with chunk-rule.patch applied (git apply), stripped and
# xz-compressed to .carry/bin/gnn-run-B.xz; A is .carry/bin/gnn-run.xz.
set -u
mkdir -p /tmp/bin
xz -dc .carry/bin/gnn-run.xz > /tmp/bin/A; xz -dc .carry/bin/gnn-run-B.xz > /tmp/bin/B; chmod +x /tmp/bin/A /tmp/bin/B
export PATH=/usr/local/cuda/bin:$PATH GNNC_CACHE_DIR=/tmp/gnnc-kernels
mkdir -p "$OUT" /tmp/gnnc-kernels; nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT"/device.txt
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
python3 $P/dump_graph.py arxiv-like /tmp $G/arxiv-like.npy > /dev/null 2>&1
for case in "gnnc_ops_bf16 max --grad" "gnnc_ops_bf16 spmm_sum fwd" "gnnc_ops_bf16 spmm_sum --grad" \
    "gnnc_ops_bf16 gatv2 --grad" "gnnc_ops_bf16 gt --grad" "gnnc_ops max --grad" "gnnc_ops spmm_sum fwd" \
    "gnnc_ops gatv2 --grad"; do
  set -- $case; set=$1 op=$2 grad=$3; [ $grad = fwd ] && grad=""
  for v in A B A B; do
    timeout 60 /tmp/bin/$v $P/$set/$op.mlir --graph=$G/arxiv-like.npy --backend=cuda \
      --no-check --reps=20 --warmup=5 $grad > /tmp/o.json 2> /tmp/o.err
    python3 - $set $op "${grad:-fwd}" $v <<'PY' >> "$OUT"/ab.txt
import json, sys
try:
    c = json.load(open("/tmp/o.json"))["cuda"]
    print(*sys.argv[1:], "%.4f" % (c["fwdbwd_median_ms"] if sys.argv[3] == "--grad" else c["median_ms"]))
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/o.err").read()[:300])
PY
  done
done
cat "$OUT"/ab.txt
