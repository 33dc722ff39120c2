#!/usr/bin/env bash
# Session 72, call 1 (one GPU): session 71's last fix on a GPU
# (test_nn_cuda.py whole), then where GINE's training step on QM9 leaves
# the device idle (bench/probes/host/gine_timeline.py), and bench/gine.py.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
t timeline
timeout 150 python3 bench/probes/host/gine_timeline.py "$D/qm9" > "$R/timeline.txt" 2>&1
t gine
timeout 120 python3 bench/gine.py "$D/qm9" --rounds 3 > "$R/gine.txt" 2>&1
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
  > "$R/pytest.txt" 2>&1)
t done
cat "$R/progress.txt"; cat "$R/timeline.txt" | grep -v Warn | head -80; tail -5 "$R/gine.txt"; tail -3 "$R/pytest.txt"
