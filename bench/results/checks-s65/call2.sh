#!/usr/bin/env bash
# Session 65, call 2 (one GPU): the side-stream test again (call 1 found
# its threads' runs replayed: outputs at addresses seen before), then where
# users feel the kernels on this tree (issues 28 and 31), gnnc and PyG in
# one process each: every gnnc.nn layer against PyG (bench/nn_layers.py:
# forward+backward on pubmed, musae-github, blogcatalog at 64 channels;
# host time per call), GINE on QM9
# batches (bench/gine.py), Cora GCN and GAT 10 seeds eager
# (train_cora.py --compare-pyg).
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-opt GNNRuntimeTests; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry "$OUT"
t gtest
timeout 60 /tmp/bin/GNNRuntimeTests --gtest_filter='GpuProgram.*' > "$R/gtest.txt" 2>&1
t layers
timeout 150 python3 bench/nn_layers.py --datasets "$D" --reps 20 --channels 64 \
  > "$R/layers.txt" 2>&1
t gine
timeout 50 python3 bench/gine.py "$D/qm9" --out "$R/gine.json" > "$R/gine.txt" 2>&1
t epochs
for m in gcn gat; do
  timeout 60 python3 examples/python/train_cora.py --model $m --seeds 10 --compare-pyg \
    >> "$R/epochs.txt" 2>&1
done
t done
