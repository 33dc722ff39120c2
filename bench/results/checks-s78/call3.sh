#!/usr/bin/env bash
# Session 78, call 3 (one H200: PyG's HGT at full size does not fit an
# 80 GB H100, call 2): issue 31's HGT model on the ogbn-mag-shaped graph
# (bench/hetero_sage.py --model hgt, now reporting a side's out-of-memory
# instead of stopping), the to_hetero GraphSAGE beside it, then one
# GINEConv layer and the model at 4,096 molecules, three times each,
# alternating (this card's figures; compare within the call only).
# Carried: .carry/datasets, .carry/s76.
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
for m in hgt sage; do
  t $m
  echo "== $m" >> $R/hetero.txt
  timeout 150 python3 bench/hetero_sage.py --model $m >> $R/hetero.txt 2>&1
done
for i in 1 2 3; do
  t gine-$i
  echo "== layer-only $i" >> $R/gine.txt
  timeout 100 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -4 >> $R/gine.txt
  echo "== model $i" >> $R/gine.txt
  timeout 100 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -4 >> $R/gine.txt
done
t end
cat $R/hetero.txt $R/gine.txt
