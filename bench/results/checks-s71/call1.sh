#!/usr/bin/env bash
# Session 71, call 1 (one GPU): models.GCN's call plan (models._GcnModelPlan)
# where users feel it, new Python ("new", the working tree) against HEAD's
# ("old", .carry/oldpy: 97c93ea's python/gnnc), the same native module.
# Parts, most wanted first:
#  epochs  Cora and Citeseer, 10 seeds, eager, train_cora.py --compare-pyg:
#          --model gcn-model (models.GCN, both libraries) old and new,
#          --model gcn and gat new
#  host    nn_layers.py --parts host (per-call host time; the 2-layer Cora
#          GCN as layers and as models.GCN), new then old
#  gine    bench/gine.py on QM9 (issue 31's GINE), new
#  ro      Cora, models.GCN, torch.compile(mode="reduce-overhead"), 3 seeds
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/old; cp -r .carry/oldpy/python/gnnc /tmp/old/; cp "$B"/py312/_gnnc*.so /tmp/old/gnnc/
NEW=/tmp/pkg; OLD=/tmp/old
cora() { timeout 120 python3 examples/python/train_cora.py --seeds 10 --compare-pyg "$@"; }
t epochs
for ds in cora citeseer; do
  for side in new old; do
    P=$NEW; [ $side = old ] && P=$OLD
    echo "### $side $ds gcn-model" >> "$R/epochs.txt"
    PYTHONPATH=$P cora --dataset $ds --model gcn-model >> "$R/epochs.txt" 2>&1
  done
  for m in gcn gat; do
    echo "### new $ds $m" >> "$R/epochs.txt"
    PYTHONPATH=$NEW cora --dataset $ds --model $m >> "$R/epochs.txt" 2>&1
  done
done
t host
for side in new old; do
  P=$NEW; [ $side = old ] && P=$OLD
  echo "### $side" >> "$R/host.txt"
  PYTHONPATH=$P timeout 150 python3 bench/nn_layers.py --datasets "$D" --parts host >> "$R/host.txt" 2>&1
done
t gine
PYTHONPATH=$NEW timeout 120 python3 bench/gine.py "$D/qm9" --rounds 3 >> "$R/gine.txt" 2>&1
t ro
PYTHONPATH=$NEW timeout 200 python3 examples/python/train_cora.py --seeds 3 --compare-pyg \
  --model gcn-model --compile --compile-mode reduce-overhead >> "$R/ro.txt" 2>&1
t done
cat "$R/progress.txt"; grep -E "###|epoch|accuracy" "$R/epochs.txt"; grep -E "###|^\|" "$R/host.txt" | grep -E "###|cora|gcn \|"; cat "$R/gine.txt" | tail -6; tail -8 "$R/ro.txt"
