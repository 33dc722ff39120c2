#!/usr/bin/env bash
# Session 31, call 8: the committed tree (52a1751). CUDA tests of the loader
# and of the graph cache's change checks; the probe with the fixed variant
# list (call 7's probe stopped on a name missing from ALL); train_ddp.py's
# defaults with the graph and features in pinned host memory.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt
  timeout 200 python3 -m pytest -q -p no:cacheprovider -rf test_nn_cuda.py \
    -k "synchronise or sorted or sparse or cached or write or stale or version" > $R/pytest-nn-cuda.txt 2>&1
  tail -2 $R/pytest-nn-cuda.txt )
t probe
ROUNDS=4 PHASES=1 VARIANTS=p0t,p1,p1f,p1t,p1tf timeout 250 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|^p[01]" $R/prefetch.txt
t pinned
G=synthetic:232965:114615892:128:41
for m in device pinned; do
  echo "== $m" >> $R/train.txt
  timeout 100 python3 examples/python/train_ddp.py --graph $G --epochs 5 \
    --feature-memory $m --graph-memory $m >> $R/train.txt 2>&1
done
grep -E "==|median|MiB" $R/train.txt
t done
