#!/usr/bin/env bash
# Session 71, call 3 (one GPU): issue 28's Cora and Citeseer epochs (10
# seeds, eager) with train_cora.py running the libraries seed by seed
# (gnnc, then PyG, per seed: the host's drift touches both alike), for
# models.GCN (gcn-model), two GCNConv layers (gcn) and two GATConv (gat);
# then where GINE's training step spends its time (gine_step.py: forward
# and backward synchronised, torch.profiler tables).
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
t epochs
for ds in cora citeseer; do for m in gcn-model gat gcn; do
  echo "### $ds $m" >> "$R/epochs.txt"
  timeout 100 python3 examples/python/train_cora.py --seeds 10 --compare-pyg --dataset $ds \
    --model $m >> "$R/epochs.txt" 2>&1
done; done
t gine
OUT=$R timeout 150 python3 bench/probes/host/gine_step.py "$D/qm9" > "$R/gine_step.txt" 2>&1
rm -f "$R"/trace-*.json
t done
cat "$R/progress.txt"; grep -E "###|epoch|accuracy" "$R/epochs.txt"; grep -E "forward .* ms" "$R/gine_step.txt"
