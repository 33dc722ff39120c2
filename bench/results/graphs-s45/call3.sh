#!/usr/bin/env bash
# Call 3: does GINE's step replay? bench/probes/host/gine_bounds.py (host
# time per gnnc op call) with GNNC_CUDA_GRAPHS=0 and the default; then
# nn_layers.py speed on musae-github and blogcatalog (GCN, GIN, SAGE mean,
# 64 channels), default against GNNC_CUDA_GRAPHS=0, one round each.
set -u
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W
t bounds
for g in 1 0; do
  GNNC_CUDA_GRAPHS=$g timeout 120 python3 bench/probes/host/gine_bounds.py $D/qm9 --iters 100 --rounds 2 > $W/bounds-g$g.txt 2>&1
done
t layers
for g in 1 0; do
  GNNC_CUDA_GRAPHS=$g timeout 110 python3 bench/nn_layers.py --datasets $D --graphs musae-github blogcatalog --channels 64 --layers gcn gin sage_mean --parts speed --reps 20 > $W/layers-g$g.txt 2>&1
done
t done
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
