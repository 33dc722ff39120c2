#!/usr/bin/env bash
# Session 27, call 5: the op copies tensors that start off a 16-byte
# boundary (this tree's module): the probe of call 4 again (x and
# edge_index views) and the CUDA tests of it.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t align
timeout 300 python3 bench/probes/align/views.py > $R/align.txt 2>&1; grep -v PASS $R/align.txt | tail -30
t pytest
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py -k "boundary or matches_pyg" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
t end
