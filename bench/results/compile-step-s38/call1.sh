#!/usr/bin/env bash
# Call 1: the reduce-overhead recipes on Cora (GCN, GAT), gnnc and PyG.
source bench/gpu_setup.sh .carry "$OUT"
P=bench/probes/compile/step_recipes.py
t gcn; timeout 200 python3 $P --model gcn --seeds 2 --profile loss+opt > $R/cora-gcn.txt 2>&1
t gat; timeout 200 python3 $P --model gat --seeds 2 --profile loss+opt > $R/cora-gat.txt 2>&1
t done
