#!/usr/bin/env bash
# Call 7: call 6's nn_layers A/B again in the other order (B A B A), on
# musae-github only (call 6 had B slower there in both rounds, B always
# running after A), GCN and GIN, plus the host probe of a step
# (bench/probes/host/launches.py) with each package.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA /tmp/pkgB; cp -r python/gnnc /tmp/pkgA/; cp -r python/gnnc /tmp/pkgB/
xz -dc $B/base/_gnnc.so.xz > /tmp/pkgA/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
cp $B/py312/_gnnc*.so /tmp/pkgB/gnnc/
t layers
for r in 1 2; do for s in B A; do
  mkdir -p -m 700 /tmp/kc-$s
  PYTHONPATH=/tmp/pkg$s GNNC_CACHE_DIR=/tmp/kc-$s timeout 100 python3 bench/nn_layers.py --datasets $D --graphs musae-github pubmed --channels 64 --layers gcn gin --parts speed --reps 20 > $R/layers-$s$r.txt 2>&1
done; done
t launches
for s in B A; do
  PYTHONPATH=/tmp/pkg$s GNNC_CACHE_DIR=/tmp/kc-$s timeout 100 python3 bench/probes/host/launches.py $D/musae-github gcn gin > $R/launches-$s.txt 2>&1
done
t done
