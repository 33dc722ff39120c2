#!/usr/bin/env bash
# Session 26, call 5: the CUDA pytest of the layers whose backward has a
# sum over rows now in column mode (attention vectors, biases: GAT, GATv2,
# Transformer, AGNN, HGT, RGCN, bipartite layers, autocast, half types,
# the CUDA-specific suite) on this tree's module.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
GNNC_TEST_DEVICE=cuda timeout 480 python -m pytest -q -p no:cacheprovider -x python/tests/test_nn_cuda.py python/tests/test_nn.py python/tests/test_autocast.py python/tests/test_half.py python/tests/test_hgt.py python/tests/test_rgcn.py python/tests/test_bipartite.py python/tests/test_mp_layers.py > $R/pytest.txt 2>&1
echo "rc $?" >> $R/pytest.txt
tail -4 $R/pytest.txt
t end
