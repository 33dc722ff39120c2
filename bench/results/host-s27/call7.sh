#!/usr/bin/env bash
# Session 27, call 7: the runtime's library and program tests again after
# gemm's leading dimensions became at least 1 (call 6: cuBLAS refused k = 0).
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc .carry/bin/rt.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 120 /tmp/rt --gtest_filter='GpuLibrary.*:GpuProgram.*' > $R/gtest.txt 2>&1; grep -E "OK|FAILED|PASSED" $R/gtest.txt | tail -14
t end
