#!/usr/bin/env bash
# Session 78, call 1 (one GPU): whether AccumulateGrad steals a GINE
# layer's gradients on CUDA (bench/probes/host/grad_steal.py), gine.py
# --layer-only and the model three times each, alternating, and py-spy
# --native of the training forward's loop at 250 Hz (1 kHz fell behind).
# Carried: .carry/datasets, .carry/s76, .carry/pyspy. (grad_steal.py ran in
# its first version, called as `grad_steal.py cuda QM9_DIR`: the same check.)
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
O=/tmp/o; mkdir -p $O
t steal
timeout 60 python3 bench/probes/host/grad_steal.py "$D/qm9" --device cuda > $O/steal.txt 2>&1
for i in 1 2 3; do
  t gine-$i
  timeout 100 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only > $O/gine-layer-$i.txt 2>&1
  timeout 100 python3 bench/gine.py "$D/qm9" --batch 4096 > $O/gine-model-$i.txt 2>&1
done
t spy
timeout 90 .carry/pyspy/py-spy record --native -r 250 -f raw --threads -o $O/spy-grad.txt -- \
  python3 bench/probes/host/gine_call_loop.py "$D/qm9" grad --seconds 5 > $O/spy-grad.log 2>&1
t end
cat $O/steal.txt
for f in $O/gine-*.txt; do echo "== $f"; tail -3 $f; done
tail -3 $O/spy-grad.log; ls -la $O
tar czf $R/call1-out.tgz -C $O .
