#!/usr/bin/env bash
# Interleaved A/B of two gnn-run builds over the scoreboard's ops and graphs
# (bench/ab.sh per (graph, op), ROUNDS rounds), then one line per case: the
# better median of each build, old/new, and the new build's per-step medians.
# Needs a GPU and the peers' bench folder (graphs dumped by dump_graph.py).
#
#   bench/ab_graphs.sh GNN_RUN_OLD GNN_RUN_NEW PEERS_DIR DATASETS \
#       [GRAPHS (default blogcatalog,musae-github,arxiv-like)] [OPS] [ROUNDS]
set -u
old="$1"; new="$2"; peers="$3"; datasets="$4"
graphs="${5:-blogcatalog,musae-github,arxiv-like}"
ops="${6:-spmm_sum,spmm_unweighted,max,gatv2,gt}"
rounds="${7:-2}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
for g in ${graphs//,/ }; do
  python3 "$peers/dump_graph.py" "$g" "$datasets" "$tmp/$g.txt" > /dev/null
done
for g in ${graphs//,/ }; do
  for op in ${ops//,/ }; do
    echo "== $g $op"
    bash "$here/ab.sh" "$old" "$new" "$peers/gnnc_ops/$op.mlir" "$tmp/$g.txt" "$rounds"
  done
done > "$tmp/ab.txt" 2>&1
python3 - "$tmp/ab.txt" "$old" "$new" <<'PY'
import re, sys
path, old, new = sys.argv[1:4]
cur, res = None, {}
for line in open(path):
    if line.startswith("=="):
        cur = line[3:].strip(); res[cur] = {old: [], new: []}; continue
    m = re.match(r"(.*): ([0-9.]+) ms \((.*)\)", line.strip())
    if m and cur and m.group(1) in res[cur]:
        res[cur][m.group(1)].append((float(m.group(2)), m.group(3)))
for case, v in res.items():
    if v[old] and v[new]:
        o, n = min(v[old]), min(v[new])
        print(f"{case:32s} old {o[0]:.4f} new {n[0]:.4f} old/new {o[0] / n[0]:.3f} | new steps: {n[1]}")
    else:
        print(f"{case:32s} failed")
PY
rm -rf "$tmp"
