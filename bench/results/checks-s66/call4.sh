#!/usr/bin/env bash
# Session 66, call 4 (one GPU), HEAD's binaries and module: the cold start
# again, modes interleaved and repeated (call 3 ran each mode once, async
# first: the first process also reads the libraries from disk), PyTorch's own
# first-use costs apart and PyG's GAT beside it (bench/jit_latency.py cold
# --warm-torch); cProfile of gnnc's first step (probes/host/cold.py,
# then named cold_profile.py);
# NVRTC times of the step's kernels on this host's cores (jit_latency compile).
set -u
for v in gnn-run gnn-opt gnn-runtime-bench; do xz -dc .carry/bin/$v.xz > .carry/$v; chmod +x .carry/$v; done
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/jb/bin /tmp/jb/python; cp -r /tmp/pkg/gnnc /tmp/jb/python/
cp .carry/gnn-run .carry/gnn-opt .carry/gnn-runtime-bench /tmp/jb/bin/
nproc > "$R/nproc.txt"
t cold
timeout 300 python3 bench/jit_latency.py cold --warm-torch --repeat 3 --build /tmp/jb > "$R/cold.txt" 2>&1
t profile
for i in 1 2; do
  GNNC_CACHE_DIR=$(mktemp -d) timeout 60 python3 bench/probes/host/cold.py > "$R/profile$i.txt" 2>&1
done
t compile
timeout 120 python3 bench/jit_latency.py compile --build /tmp/jb > "$R/compile.txt" 2>&1
t done
cat "$R/cold.txt"; head -60 "$R/profile2.txt"; tail -30 "$R/compile.txt"
