#!/usr/bin/env bash
# Session 80, call 5 (one GPU, short): the committed tree's module
# (.carry/final) on the half-precision tests: test_autocast.py (every
# gnnc.nn layer under bf16/f16 autocast against PyG's under the same
# autocast, GINE among them) and test_half.py, on CUDA.
set -u
mkdir -p .carry/py312; xz -dc .carry/final/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider test_autocast.py test_half.py 2>&1 | tail -4 > $R/pytest.txt)
cat $R/pytest.txt
