#!/usr/bin/env bash
# Session 31, call 1: the loader sampling ahead on a thread of its own
# (prefetch) and building each batch's gnnc graph there. CUDA tests of the
# loader and of the graph cache; the reddit-like sampled SAGE epoch with
# prefetch 0 (sampled when the loop asks) and 1 (the new default), alternated
# in separate processes, untrimmed and trimmed.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_nn_cuda.py \
    -k "synchronise or sorted or sparse or cached or write or stale" > $R/pytest-nn-cuda.txt 2>&1
  tail -2 $R/pytest-nn-cuda.txt )
t epoch
for s in p0 p1 p0 p1 p0 p1 p0t p1t p0t p1t; do
  echo "== $s" >> $R/epoch.txt
  extra="--prefetch ${s:1:1}"; [ ${#s} = 3 ] && extra="$extra --trim"
  timeout 60 python3 examples/python/train_ddp.py \
    --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 5 $extra >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
t done
