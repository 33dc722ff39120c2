#!/usr/bin/env bash
# Session 78, call 3 (one GPU; PyG's HGT at full size does not fit an
# 80 GB H100, call 2, so on a card under 100 GB the HGT model runs on the
# graph at half scale, --scale 0.5): issue 31's HGT model on the ogbn-mag-
# shaped graph (bench/hetero_sage.py --model hgt, now reporting a side's
# out-of-memory instead of stopping), the to_hetero GraphSAGE beside it
# (full size), then one GINEConv layer and the model at 4,096 molecules,
# twice each, alternating (this card's figures; compare within the
# call only).
# Carried: .carry/datasets, .carry/s76.
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
scale=1.0; [ "$mem" -lt 100000 ] && scale=0.5
for m in hgt sage; do
  t $m
  s=1.0; [ $m = hgt ] && s=$scale
  echo "== $m scale $s" >> $R/hetero.txt
  timeout 150 python3 bench/hetero_sage.py --model $m --scale $s >> $R/hetero.txt 2>&1
done
for i in 1 2; do
  t gine-$i
  echo "== layer-only $i" >> $R/gine.txt
  timeout 100 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -4 >> $R/gine.txt
  echo "== model $i" >> $R/gine.txt
  timeout 100 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -4 >> $R/gine.txt
done
t end
cat $R/hetero.txt $R/gine.txt
