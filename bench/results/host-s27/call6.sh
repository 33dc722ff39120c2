#!/usr/bin/env bash
# Session 27, call 6: the final tree's GPU checks: the runtime's library
# tests (the new gemm layout/offset test on the cuBLAS GEMM), and the CUDA
# tests of test_nn_cuda.py that call 5 did not run.
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc .carry/bin/rt.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 120 /tmp/rt --gtest_filter='GpuLibrary.*:GpuProgram.*' > $R/gtest.txt 2>&1; grep -E "OK|FAILED|PASSED" $R/gtest.txt | tail -14
t pytest
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py -k "not boundary and not matches_pyg" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
t end
