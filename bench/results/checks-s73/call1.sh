#!/usr/bin/env bash
# Session 73, call 1 (one GPU): where GINE stands on this card (tree 2e7e5cd):
# bench/gine.py at three batch sizes, the training-loop probe (steps back to
# back), the host/device split.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
for b in 4096 1024 256; do
  t "gine $b"
  timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 --batch $b > "$R/gine-$b.txt" 2>&1
done
t loop
timeout 200 python3 bench/probes/host/gine_loop.py "$D/qm9" > "$R/loop.txt" 2>&1
t split
timeout 100 python3 bench/probes/host/gine_split.py "$D/qm9" --rounds 30 > "$R/split.txt" 2>&1
t done
cat "$R/progress.txt"; for b in 4096 1024 256; do tail -4 "$R/gine-$b.txt"; done; cat "$R/loop.txt"; tail -8 "$R/split.txt"
