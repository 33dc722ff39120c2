#!/usr/bin/env bash
# Session 66, call 5 (one GPU), HEAD's module: issue 28's reduce-overhead
# point with the recipes of bench/probes/compile/step_recipes.py (the whole
# step compiled: loss+opt; inputs marked static or not), gnnc and PyG in one
# process, Cora GCN and GAT, 2 seeds; and train_cora.py --cuda-graph (the
# step captured by hand) beside PyG eager.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
for m in gcn gat; do
  t "recipes $m"
  timeout 110 python3 bench/probes/compile/step_recipes.py --model $m --seeds 2 \
    --recipes eager,loss+opt >> "$R/recipes.txt" 2>&1
  t "recipes static $m"
  timeout 110 python3 bench/probes/compile/step_recipes.py --model $m --seeds 2 \
    --recipes loss+opt --static --libs gnnc >> "$R/recipes.txt" 2>&1
  t "graph $m"
  timeout 60 python3 examples/python/train_cora.py --model $m --seeds 2 --cuda-graph \
    --compare-pyg >> "$R/graph.txt" 2>&1
done
t done
cat "$R/progress.txt" "$R/recipes.txt" "$R/graph.txt"
