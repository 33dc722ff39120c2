#!/usr/bin/env bash
# Session 34, call 3: the fold of GINE's `lin` A/B in one process (gnnc
# with `lin` in the gnn function against gnnc with `lin` in PyTorch, rounds
# interleaved), beside PyG and the bounds.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t bounds
timeout 400 python3 bench/probes/host/gine_bounds.py $D/qm9 --iters 200 --rounds 5 > $R/bounds.txt 2>&1
tail -11 $R/bounds.txt
t end
