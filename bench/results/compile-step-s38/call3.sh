#!/usr/bin/env bash
# Call 3: where the loss+opt step's time goes (parts synchronised, profiler),
# gnnc GCN and GAT, PyG GCN, Cora.
source bench/gpu_setup.sh .carry "$OUT"
P=bench/probes/compile/step_recipes.py
t gcn; timeout 150 python3 $P --model gcn --seeds 1 --recipes loss+opt --profile loss+opt > $R/cora-gcn.txt 2>&1
t gat; timeout 120 python3 $P --model gat --seeds 1 --libs gnnc --recipes loss+opt --profile loss+opt > $R/cora-gat.txt 2>&1
t done
