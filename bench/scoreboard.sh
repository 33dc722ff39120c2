#!/usr/bin/env bash
# The op-level scoreboard (../shared/bench/peers) on the GPU machine, plus the
# same gnnc ops with a second gnn-run (e.g. the previous commit's) so that a
# change is compared with what it replaces in one run, and the 114.6M-edge
# reddit-like graph for the attention ops (forward only, no reference check).
#
#   bench/scoreboard.sh PEERS_DIR DATASETS GNN_RUN [OLD_GNN_RUN] OUT
#
# PEERS_DIR is a copy of ../shared/bench/peers, DATASETS one of
# ../shared/datasets (both carried to the GPU machine). Writes OUT/table.md
# (peers vs GNN_RUN), OUT/table-old.md (peers vs OLD_GNN_RUN) and
# OUT/reddit.jsonl.
set -uo pipefail
peers=$(realpath "$1"); datasets=$(realpath "$2"); run=$(realpath "$3")
old=""; [ $# -ge 5 ] && old=$(realpath "$4") && shift
out=$(realpath -m "$4"); mkdir -p "$out"
DATASETS="$datasets" OUT="$out" bash "$peers/run.sh" "$run" > "$out/run.log" 2>&1
tail -3 "$out/run.log"
if [ -n "$old" ]; then
  mkdir -p "$out/graphs"; files=()
  for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
    f="$out/graphs/$g.txt"; python3 "$peers/dump_graph.py" "$g" "$datasets" "$f" > /dev/null && files+=("$f")
  done
  bash "$peers/gnnc_ops.sh" "$old" "${files[@]}" > "$out/gnnc-old.jsonl"
  python3 "$peers/side_by_side.py" "$out/gnnc-old.jsonl" "$out/peers.jsonl" > "$out/table-old.md"
  rm -rf "$out/graphs"
fi
# reddit-like: 232,965 nodes, 114,615,892 edges as an int64 [E, 2] .npy
g=$(mktemp -d)/reddit-like.npy
python3 "$peers/dump_graph.py" reddit-like "$datasets" "$g" > /dev/null
for op in gatv2 gt; do
  "$run" "$peers/gnnc_ops/$op.mlir" --graph="$g" --backend=cuda --reps=10 --warmup=3 --no-check \
    > "$out/reddit-$op.json" 2> "$out/reddit-$op.err"
  python3 - "$op" "$out/reddit-$op.json" <<'PY' >> "$out/reddit.jsonl"
import json, sys
op, path = sys.argv[1:3]
try:
    c = json.load(open(path))["cuda"]
    print(json.dumps({"graph": "reddit-like", "op": op, "fwd_ms": c.get("median_ms"),
                      "program_mib": c.get("program_bytes", 0) / 2**20,
                      "graph_build_ms": c.get("graph_build_ms")}))
except Exception as e:
    print(json.dumps({"graph": "reddit-like", "op": op, "error": str(e)}))
PY
done
rm -f "$g"
cat "$out/reddit.jsonl"
