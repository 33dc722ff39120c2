#!/usr/bin/env bash
# Session 33, call 7: the final check of the session's code. Every example
# layer forward and backward (gnn-run --grad: the training step against the
# reference; the autodiff change reaches every backward) on three graphs;
# the Python tests that run on CUDA (the autograd step's placeholders reach
# every layer's training).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t examples
GNN_RUN_FLAGS=--grad timeout 260 bash test/Integration/run-examples.sh $B/bin/gnn-run $D \
  pubmed qm9 "powerlaw:nodes=20000,edges=200000,seed=1" > $R/examples.txt 2>&1; tail -1 $R/examples.txt
grep -i fail $R/examples.txt | head -5
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 280 python3 -m pytest -q -p no:cacheprovider -rf \
    test_rgcn.py test_autocast.py test_typed.py test_nn_cuda.py test_bipartite.py test_hgt.py > $R/pytest.txt 2>&1
  tail -3 $R/pytest.txt )
t end
