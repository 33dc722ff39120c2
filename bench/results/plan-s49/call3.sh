#!/usr/bin/env bash
# Session 49, call 3 (one GPU): the host sampling of call 2 again (its op
# recorder fixed for planned calls), and issue 28's host part of
# bench/nn_layers.py (now warmed up before timing) with HEAD's Python and
# this tree's, alternating.
set -u
export PATH=/usr/local/cuda/bin:$PATH
B=$(realpath .carry); R=$OUT; D=$B/datasets
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$R/device.txt"
for v in old new; do mkdir -p /tmp/pkg-$v; done
cp -r "$B/pyold/python/gnnc" /tmp/pkg-old/; cp -r python/gnnc /tmp/pkg-new/
for v in old new; do cp "$B"/py312/_gnnc*.so /tmp/pkg-$v/gnnc/; done
export GNNC_DATASETS=$D GNNC_CACHE_DIR=/tmp/gnnc-kernels
mkdir -p -m 700 /tmp/gnnc-kernels
t() { echo "== $1 $(date +%T)" >> "$R/progress.txt"; }
t sample
PYTHONPATH=/tmp/pkg-new python3 bench/probes/hostprof/sample_layers.py \
  "$B/tools/libsampler.so" /tmp/samples gin gcn sage_mean > "$R/sample.txt" 2>&1
tar czf "$R/samples.tgz" -C /tmp samples
for r in 1 2; do
  for v in old new; do
    t "host $v $r"
    PYTHONPATH=/tmp/pkg-$v python3 bench/nn_layers.py --datasets "$D" --parts host \
      >> "$R/host-$v.txt" 2>&1
  done
done
t done
