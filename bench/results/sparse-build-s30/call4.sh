#!/usr/bin/env bash
# Session 30, call 4: a bipartite graph's sides checked in the build's one
# read back (no separate id check). The runtime's graph tests; the CUDA
# pytest of the bipartite and graph-build paths; the reddit-like sampled
# SAGE epoch, untrimmed and trimmed (two bipartite graphs a step), A
# (d94853d) against B (this tree).
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 60 /tmp/rt --gtest_filter='GpuGraph.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
t pytest
( cd python/tests
  timeout 100 python3 -m pytest -q -p no:cacheprovider -rf test_nn_cuda.py \
    -k "synchronise or sorted or sparse or cached" > $R/pytest-nn-cuda.txt 2>&1
  tail -2 $R/pytest-nn-cuda.txt
  GNNC_TEST_DEVICE=cuda timeout 100 python3 -m pytest -q -p no:cacheprovider -rf \
    test_bipartite.py > $R/pytest-bipartite.txt 2>&1
  tail -2 $R/pytest-bipartite.txt )
t epoch
for s in A B At Bt; do
  if [ ${s:0:1} = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/epoch.txt
  extra=""; [ ${#s} = 2 ] && extra="--trim"
  PYTHONPATH=$pp timeout 80 python3 examples/python/train_ddp.py \
    --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 4 $extra >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
t done
