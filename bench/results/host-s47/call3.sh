#!/usr/bin/env bash
# Call 3: how much a step's time moves between rounds of one process
# (rounds.py, pubmed and musae-github, GIN and GCN; again pinned to one
# core), where a layer's step spends host time (step_parts.py), and GINE on
# QM9: HEAD's Python (.carry/pyhead) against this tree's (GINE's edge
# projection inside the gnn function), alternating processes (gine.py), and
# the kernels of each (gine_kernels.py).
set -u
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w47c; mkdir -p $W
mkdir -p /tmp/pkg-head; cp -r .carry/pyhead/python/gnnc /tmp/pkg-head/; cp "$B"/py312/_gnnc*.so /tmp/pkg-head/gnnc/
t rounds
timeout 150 python3 bench/probes/replay/rounds.py --datasets $D > $W/rounds.txt 2>&1
t rounds-one-core
timeout 100 taskset -c 3 python3 bench/probes/replay/rounds.py --datasets $D --graphs pubmed > $W/rounds-core.txt 2>&1
t step-parts
timeout 120 python3 bench/probes/host/step_parts.py > $W/step-parts.txt 2>&1
for i in 1 2; do
  for side in head new; do
    t "gine $side $i"
    pp=/tmp/pkg; [ $side = head ] && pp=/tmp/pkg-head
    PYTHONPATH=$pp timeout 100 python3 bench/gine.py $D/qm9 > $W/gine-$side-$i.txt 2>&1
  done
done
for side in head new; do
  t "gine-kernels $side"
  pp=/tmp/pkg; [ $side = head ] && pp=/tmp/pkg-head
  PYTHONPATH=$pp timeout 100 python3 bench/probes/host/gine_kernels.py $D/qm9 > $W/gine-kernels-$side.txt 2>&1
done
t done
lscpu > $W/lscpu.txt
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
