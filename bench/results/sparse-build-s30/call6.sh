#!/usr/bin/env bash
# Session 30, call 6: the final tree. The runtime's graph tests; the CUDA
# pytest of the sparse inputs, the bipartite layers and the graph build.
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
timeout 60 /tmp/rt --gtest_filter='GpuGraph.*:GpuProgram.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
cd python/tests
timeout 100 python3 -m pytest -q -p no:cacheprovider -rf test_nn_cuda.py \
  -k "sparse or sorted or synchronise or cached or write" > $R/pytest-nn-cuda.txt 2>&1
tail -2 $R/pytest-nn-cuda.txt
GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider -rf \
  test_hgt.py test_bipartite.py test_rgcn.py -k "sparse or to_hetero or pair or cuda or device" \
  > $R/pytest-cuda.txt 2>&1
tail -2 $R/pytest-cuda.txt
