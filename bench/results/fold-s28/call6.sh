#!/usr/bin/env bash
# Session 28, call 6: the final tree's package (GIN's dtype condition, the
# attention builders' shared helpers; the module as in call 5): CUDA
# pytest of every changed layer and the whole-layer probe.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
GNNC_TEST_DEVICE=cuda timeout 300 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py python/tests/test_nn.py python/tests/test_ir.py python/tests/test_message_passing.py -k "gin or GIN or gat or GAT or transformer or Transformer or explain or layer_functions" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
timeout 100 python3 bench/probes/fold/layers_cuda.py > $R/probe.txt 2>&1; tail -1 $R/probe.txt
t end
