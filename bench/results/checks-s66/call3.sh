#!/usr/bin/env bash
# Session 66, call 3 (one GPU), HEAD's binaries and module: issue 28's
# points not measured since sessions 38/45 (bench/issue28_gpu.sh's jit part:
# cold start of a GAT training step on Cora with an empty kernel cache, 40
# steps over sampled subgraphs of musae-github and blogcatalog in a fresh
# process), Cora and Citeseer epochs eager and under
# torch.compile(mode="reduce-overhead") against PyG eager (3 seeds each:
# the call's limit), and gnnc.nn layers under bf16 autocast against f32
# (session 56 found gnnc's autocast step slower than its f32 one).
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > .carry/$v; chmod +x .carry/$v; done
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
PARTS=jit timeout 260 bash bench/issue28_gpu.sh .carry "$OUT"
source bench/gpu_setup.sh .carry "$OUT"
t epochs
RO="--compile --compile-mode reduce-overhead"
for ds in cora citeseer; do
  for m in gcn gat; do
    timeout 75 python3 examples/python/train_cora.py --dataset $ds --model $m --seeds 3 \
      --compare-pyg $RO >> "$R/epochs.txt" 2>&1
  done
done
t autocast
for ac in "" "--autocast bf16"; do
  timeout 60 python3 bench/nn_layers.py --datasets "$D" --parts speed --layers gcn gat gatv2 sage_max \
    --channels 128 --graphs pubmed musae-github $ac >> "$R/autocast.txt" 2>&1
done
t done
cat "$R/progress.txt"; grep -v "^$" "$R/jit.txt" | tail -40; cat "$R/epochs.txt"; grep "^|" "$R/autocast.txt"
