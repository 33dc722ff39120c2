#!/usr/bin/env bash
# Call 6 (the final code): issue 28's JIT-latency points (bench/jit_latency.py,
# as issue28_gpu.sh's "jit" part): cold start to the end of the first GAT
# training step on Cora (empty kernel cache, fresh process), and 40 steps over
# sampled subgraphs (20 % of the nodes) of musae-github and blogcatalog in a
# process that has not seen them. Output: jit.txt.
set -u
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > .carry/$v; chmod +x .carry/$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/jb/bin /tmp/jb/python; cp -r /tmp/pkg/gnnc /tmp/jb/python/
cp "$B/gnn-run" "$B/gnn-opt" /tmp/jb/bin/
t cold
timeout 80 python3 bench/jit_latency.py cold --repeat 1 --build /tmp/jb > $R/jit.txt 2>&1
for g in musae-github blogcatalog; do
  t "sampled $g"
  timeout 100 python3 bench/jit_latency.py sampled --graph "$D/$g" --build /tmp/jb >> $R/jit.txt 2>&1
done
t done
