#!/usr/bin/env bash
# Session 77, call 2 (one GPU): where a GINE layer call's host time goes,
# by native samples: bench/probes/host/gine_call_loop.py (layer 1 of
# bench/gine.py's model on the QM9 batch, calls back to back) timed without
# a profiler (grad, op, alloc), then under py-spy --native at 1 kHz (raw
# collapsed stacks per thread) for the training forward (`grad`). Everything comes back in one tarball
# ($OUT keeps only a few files). Then bench/gine.py --layer-only (one
# GINEConv layer) and the model at 4,096 molecules. (Trimmed to what the device time left allowed.) Carried: .carry/datasets, .carry/s76
# (this tree's module, xz), .carry/pyspy.
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
O=/tmp/o; mkdir -p $O
L=bench/probes/host/gine_call_loop.py
t loops
for m in grad op alloc; do
  timeout 60 python3 $L "$D/qm9" $m --seconds 3 >> $O/loops.txt 2>&1
done
for m in grad; do
  t spy-$m
  timeout 90 .carry/pyspy/py-spy record --native -r 1000 -f raw --threads -o $O/spy-$m.txt -- \
    python3 $L "$D/qm9" $m --seconds 5 > $O/spy-$m.log 2>&1
done
# Issue 31's GINE point at the layer level (bench/gine.py --layer-only, as
# bench/nn_layers.py measures every layer) and the model's step.
for b in 4096; do
  t gine-$b
  timeout 120 python3 bench/gine.py "$D/qm9" --batch $b --layer-only > $O/gine-layer-$b.txt 2>&1
done
timeout 120 python3 bench/gine.py "$D/qm9" --batch 4096 > $O/gine-model-4096.txt 2>&1
t end
for f in $O/gine-*.txt; do echo "== $f"; tail -5 $f; done
cat $O/loops.txt; tail -3 $O/spy-*.log; ls -la $O
tar czf $R/call2-out.tgz -C $O .
