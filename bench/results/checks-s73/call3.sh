#!/usr/bin/env bash
# Session 73, call 3 (one GPU): the kernels of GINE's step (torch.profiler)
# and the host/device split with the old module (2e7e5cd) and the new one
# (atbNarrow), in one call; outputs in one archive.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; xz -dc .carry/ab/old.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p /tmp/o
for side in old new; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  t "kernels $side"
  PYTHONPATH=$pp timeout 100 python3 bench/probes/host/gine_kernels.py "$D/qm9" > /tmp/o/kernels-$side.txt 2>&1
  t "split $side"
  PYTHONPATH=$pp timeout 100 python3 bench/probes/host/gine_split.py "$D/qm9" --rounds 30 > /tmp/o/split-$side.txt 2>&1
done
t done
cp "$R/progress.txt" /tmp/o/; tar czf "$R/out.tgz" -C /tmp/o .
for side in old new; do grep -E "atb|sumSlices|step" /tmp/o/kernels-$side.txt | head -8; tail -6 /tmp/o/split-$side.txt; done
