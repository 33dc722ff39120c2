#!/usr/bin/env bash
# Session 26, call 2 (call1.sh's setup; the timings left out of call 1). A = HEAD 55f29a9's package and module (.carry/oldpy,
# .carry/py312-old), B = this tree: the bias gradient's column sums in
# column mode, matmuls adding into the previous term in place, the
# graph_block kernel reading a transposed weight's rows as float4, and
# GCNConv/SAGEConv as one gnn function each (whole-layer v2, the SAGE terms
# summed by accumulating matmuls). Checks first (gnn-run --grad against the
# reference, CUDA pytest), then speed: molecules (graph_block), large.py's
# SAGE profile, the reddit-like sampled SAGE epoch, nn_layers.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
t epoch
for s in A B A B; do
  echo "== $s" >> $R/epoch.txt
  run $s timeout 80 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 3 >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
t layers
for s in A B; do
  run $s timeout 70 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --layers gcn sage_mean --reps 20 > $R/layers-$s.txt 2>&1
done
for s in A B; do tail -6 $R/layers-$s.txt; done
t split
for s in A B; do
  echo "== $s" >> $R/split.txt
  run $s timeout 40 python3 bench/probes/hostsplit/split.py --layers gcn,sage --calls 1000 >> $R/split.txt 2>&1
done
grep -E "==|gcn|sage" $R/split.txt | head -20
t end
