#!/usr/bin/env bash
# Call 3 (this session's code): issue 28's whole per-layer table again
# (nn_layers.py, three graphs, 64 and 128 channels, and the host part),
# Cora under torch.compile(mode="reduce-overhead") against PyG's, then the
# JIT-latency points (cold start to the first GAT step on Cora, 40 sampled
# steps of musae-github and blogcatalog in fresh processes).
set -u
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > .carry/$v; chmod +x .carry/$v; done
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W
t layers
timeout 200 python3 bench/nn_layers.py --datasets $D --reps 20 > $W/layers.txt 2>&1
echo "rc=$?" >> $W/layers.txt
t cora-ro
for m in gcn gat; do
  timeout 120 python3 examples/python/train_cora.py --model $m --seeds 3 --compile --compile-mode reduce-overhead --compare-pyg > $W/cora-ro-$m.txt 2>&1
done
mkdir -p /tmp/jb/bin /tmp/jb/python; cp -r /tmp/pkg/gnnc /tmp/jb/python/
cp "$B/gnn-run" "$B/gnn-opt" /tmp/jb/bin/
t cold
timeout 80 python3 bench/jit_latency.py cold --repeat 1 --build /tmp/jb > $W/jit.txt 2>&1
for g in musae-github blogcatalog; do
  t "sampled $g"
  timeout 100 python3 bench/jit_latency.py sampled --graph "$D/$g" --build /tmp/jb >> $W/jit.txt 2>&1
done
t done
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
