#!/usr/bin/env bash
# Session 72, call 7 (one GPU): the final tree (0487221: the CUDA call's
# output addresses from outputPointers): test_core.py with
# GNNC_TEST_DEVICE=cuda, test_nn_cuda.py, bench/gine.py once.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
t core
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -rs -p no:cacheprovider \
  test_core.py > "$R/core.txt" 2>&1)
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
  > "$R/pytest.txt" 2>&1)
t gine
timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 > "$R/gine.txt" 2>&1
t done
cat "$R/progress.txt"; tail -6 "$R/core.txt"; tail -2 "$R/pytest.txt"; tail -4 "$R/gine.txt"
