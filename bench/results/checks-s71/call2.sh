#!/usr/bin/env bash
# Session 71, call 2 (one GPU): models.GCN's call plan measured in one
# process (bench/probes/host/model_plan_ab.py: plan kept / never kept,
# interleaved; PyG's models.GCN epoch beside them), and its CUDA tests.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
t tests
(cd python/tests && timeout 200 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
  -k "model_plan or cached_calls or layer_plans or reduce_overhead" > "$R/pytest.txt" 2>&1)
t ab
A=bench/probes/host/model_plan_ab.py
timeout 120 python3 $A > "$R/ab-cora.txt" 2>&1
timeout 120 python3 $A --fused-adam > "$R/ab-cora-fused.txt" 2>&1
timeout 120 python3 $A --backward-on-calling-thread > "$R/ab-cora-thread.txt" 2>&1
timeout 120 python3 $A --dataset citeseer > "$R/ab-citeseer.txt" 2>&1
t done
cat "$R/progress.txt"; tail -3 "$R/pytest.txt"; for f in "$R"/ab-*.txt; do echo "## $f"; grep -E "^host|^epoch" $f; done
