#!/usr/bin/env bash
# Session 30, call 2 (after call 1: the symmetry statistic by edge hashes, PyG not called where it fails). .carry: py312/ (this tree's module), py312-old/ +
# oldpy/gnnc (HEAD d94853d, before the CSR-by-target build), bin/
# GNNRuntimeTests.xz (this tree). The runtime's graph tests (the new
# DestinationSortedEdgesSkipTheSort among them); the CUDA pytest of the
# sparse-adjacency and graph-build changes; the graph build's host time
# A (d94853d) against B (this tree); the reddit-like sampled SAGE epoch A, B,
# and both with --trim.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 100 /tmp/rt --gtest_filter='GpuGraph.*:GpuProgram.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
    -k "sparse or sorted or synchronise or cached or write" > $R/pytest-nn-cuda.txt 2>&1
  tail -2 $R/pytest-nn-cuda.txt
  GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider \
    test_bipartite.py test_rgcn.py test_hgt.py test_loader.py > $R/pytest-cuda-rest.txt 2>&1
  tail -2 $R/pytest-cuda-rest.txt )
t build
for s in A B A B; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/build.txt
  PYTHONPATH=$pp timeout 60 python3 bench/probes/build/build_time.py >> $R/build.txt 2>&1
done
cat $R/build.txt
t epoch
for s in A B At Bt; do
  if [ ${s:0:1} = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/epoch.txt
  extra=""; [ ${#s} = 2 ] && extra="--trim"
  PYTHONPATH=$pp timeout 100 python3 examples/python/train_ddp.py \
    --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 4 $extra >> $R/epoch.txt 2>&1
done
grep -E "==|epoch|median" $R/epoch.txt
t done
