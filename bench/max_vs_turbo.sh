#!/usr/bin/env bash
# The max aggregation's forward + backward, turbo-gnn's (the peers'
# ops_bench.py) and gnnc's (gnn-run --grad, F = 128 like the scoreboard),
# alternating per graph for ROUNDS rounds in one run: turbo-gnn's own times
# move a lot between runs, so a single scoreboard run can flatter either side.
#   bench/max_vs_turbo.sh GNN_RUN PEERS_DIR DATASETS [GRAPHS] [ROUNDS]
# GRAPHS defaults to musae-github,blogcatalog; ROUNDS to 3. Needs a GPU and
# the peers' bench folder (with its turbo-gnn wheel).
set -u
run=$1 peers=$2 datasets=$3 graphs=${4:-musae-github,blogcatalog} rounds=${5:-3}
python3 -c "import turbo_gnn" 2> /dev/null ||
  python3 -m pip install -q --no-deps "$peers"/turbo_gnn-*-cp312-*.whl > /dev/null 2>&1
tmp=$(mktemp -d)
sed -E 's/(%(x): tensor<[^>]*>)/\1 {gnn.differentiable}/g' "$peers/gnnc_ops/max.mlir" > "$tmp/max.mlir"
for g in ${graphs//,/ }; do
  python3 "$peers/dump_graph.py" "$g" "$datasets" "$tmp/$g.txt" > /dev/null
done
nvidia-smi --query-gpu=name --format=csv,noheader
for r in $(seq "$rounds"); do
  for g in ${graphs//,/ }; do
    python3 "$peers/ops_bench.py" --graphs "$g" --ops max --impls turbo-gnn \
      --datasets "$datasets" 2> /dev/null | grep '"impl"' | R=$r python3 -c "
import json, os, sys
for l in sys.stdin:
    d = json.loads(l)
    print('round', os.environ['R'], d['graph'], 'turbo-gnn fwd', round(d['fwd_ms'], 4),
          'fwd+bwd', round(d['fwdbwd_ms'], 4))"
    "$run" "$tmp/max.mlir" --graph="$tmp/$g.txt" --backend=cuda --grad --reps=20 \
      --warmup=5 --no-check > "$tmp/out.json" 2> /dev/null
    R=$r G=$g python3 -c "
import json, os
t = open('$tmp/out.json').read()
c = json.loads(t[t.find('{'):])['cuda']
print('round', os.environ['R'], os.environ['G'], 'gnnc fwd+bwd', round(c['fwdbwd_median_ms'], 4))"
  done
done
rm -rf "$tmp"
