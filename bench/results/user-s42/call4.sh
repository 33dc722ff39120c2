#!/usr/bin/env bash
# Call 4: Cora, 2-layer GCN and GAT, 10 seeds, gnnc and PyG in one process,
# eager, with PyTorch's default multithreaded backward and with every
# backward on the calling thread (train_cora.py --backward-on-calling-thread,
# both libraries); GCN once more in the opposite order (noise).
# Output: epochs.txt.
set -u
source bench/gpu_setup.sh .carry "$OUT"
E=$R/epochs.txt
run() { echo "== $*" >> $E; timeout 100 python3 examples/python/train_cora.py --seeds 10 --compare-pyg "$@" 2>&1 | grep -v -i warn >> $E; }
t epochs
run --model gcn
run --model gcn --backward-on-calling-thread
run --model gat
run --model gat --backward-on-calling-thread
run --model gcn --backward-on-calling-thread
run --model gcn
t done
