#!/usr/bin/env bash
# Session 65, call 1 (one GPU): what has not run on a GPU since session 58,
# on this session's tree (c5b224c and the side-stream release): the runtime
# GPU gtests (GNNRuntimeTests, the new SideStreamsEndWithTheirThreads
# among them), the whole Python suite on CUDA (8 shards,
# bench/cuda_suite.sh) and, beside it, compute-sanitizer memcheck and
# racecheck over every kernel family in f32, bf16 and f16
# (test/Integration/sanitize.sh on musae-github, chunks of 8192 and 4).
set -u
mkdir -p /tmp/bin /tmp/w
for v in gnn-run gnn-opt gnn-translate GNNRuntimeTests; do
  xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry "$OUT"
t gtest
timeout 120 /tmp/bin/GNNRuntimeTests > "$R/gtest.txt" 2>&1
tail -3 "$R/gtest.txt" > "$R/gtest-tail.txt"
t start
(TOOLS="memcheck racecheck" TYPES="f32 bf16 f16" timeout 440 bash test/Integration/sanitize.sh \
  /tmp/bin/gnn-run "$D" musae-github /tmp/bin/gnn-opt > "$R/sanitize.txt" 2>&1; t sanitize-end) &
bash bench/cuda_suite.sh /tmp/w "$R/summary.txt" 8 420
t pytest-end
wait
t done
tar czf $R/logs.tgz -C /tmp/w .
