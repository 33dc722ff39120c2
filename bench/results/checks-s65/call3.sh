#!/usr/bin/env bash
# Session 65, call 3 (the same H100, still warm after call 2; run inline as
# the `run` command): the layer table at 128 channels (speed part only) and
# Citeseer GCN/GAT 10 seeds eager against PyG.
source bench/gpu_setup.sh .carry $OUT >/dev/null 2>&1
t l128
timeout 120 python3 bench/nn_layers.py --datasets "$D" --reps 20 --channels 128 --parts speed \
  > $OUT/layers128.txt 2>&1
t cite
for m in gcn gat; do
  timeout 60 python3 examples/python/train_cora.py --dataset citeseer --model $m --seeds 10 \
    --compare-pyg >> $OUT/epochs-citeseer.txt 2>&1
done
t done
