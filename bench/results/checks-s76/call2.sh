#!/usr/bin/env bash
# Session 76, call 2 (one GPU): the device time of GINE's backward with the
# weight gradients beside the input gradient's steps, in alternating
# processes: old (a1a617d's module), new (this tree's), new with
# GNNC_CONCURRENT_LAUNCHES=0 (the same Programs, every window in order)
# (bench/probes/host/gine_backward_device.py: K backward passes queued
# without synchronising, CUDA events); bench/gine.py in four more
# alternating pairs; nn_layers.py speed (GCN, SAGE mean, GIN at 64
# channels) in two more pairs. Outputs in out.tgz.
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; xz -dc .carry/py312chunks/_gnnc.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
O=/tmp/o76b; rm -rf $O; mkdir -p $O
t device
for i in 1 2 3; do
  PYTHONPATH=/tmp/pkgold timeout 40 python3 bench/probes/host/gine_backward_device.py "$D/qm9" > $O/bwd-old-$i.txt 2>&1
  timeout 40 python3 bench/probes/host/gine_backward_device.py "$D/qm9" > $O/bwd-new-$i.txt 2>&1
  GNNC_CONCURRENT_LAUNCHES=0 timeout 40 python3 bench/probes/host/gine_backward_device.py "$D/qm9" > $O/bwd-inorder-$i.txt 2>&1
done
t gine
for i in 1 2 3 4; do
  PYTHONPATH=/tmp/pkgold timeout 40 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 40 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
t layers
for i in 1 2; do
  for side in old new; do
    pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
    PYTHONPATH=$pp timeout 40 python3 bench/nn_layers.py --datasets "$D" --parts speed --channels 64 \
      --layers gcn sage_mean gin > $O/layers-$side-$i.txt 2>&1
  done
done
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
for f in $O/bwd-*.txt; do echo "$(basename $f): $(tail -1 $f)"; done
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
for f in $O/layers-*.txt; do echo "== $(basename $f)"; grep -E "^\| (pubmed|musae|blog)" $f; done
cat $O/progress.txt
