#!/usr/bin/env bash
# Session 31, call 10: products-like (2.45M nodes, 123.7M edges, 100
# features, 47 classes, 20 % of the nodes as seeds) with graph and features
# in pinned host memory, train_ddp.py's new defaults (trimmed, fused Adam,
# prefetch 1), 3 epochs; session 12 measured 5.09 s per epoch (untrimmed,
# prefetch 0).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t products
timeout 400 python3 examples/python/train_ddp.py --graph synthetic:2449029:123718280:100:47 \
  --train-fraction 0.2 --epochs 3 --feature-memory pinned --graph-memory pinned > $R/products.txt 2>&1
echo "exit $?" >> $R/products.txt
tail -8 $R/products.txt
t done
