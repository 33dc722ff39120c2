#!/usr/bin/env bash
# Session 50, call 2 (one GPU): the final tree's CUDA tests of the layers and
# the core (the plans, the cached graphs' pending change check, whose
# hand-over TorchOps.cpp now writes with std::exchange). Run from the
# repository root with $OUT set.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 400 python3 -m pytest -q -p no:cacheprovider \
   test_nn_cuda.py test_core.py > "$R/pytest.txt" 2>&1)
tail -1 "$R/pytest.txt" >> "$R/progress.txt"
t done
