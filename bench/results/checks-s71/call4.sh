#!/usr/bin/env bash
# Session 71, call 4 (one GPU): GIN layers over PyG's MLP keep a call plan
# now (conv._GinPlan over conv._mlp_state). Parts, most wanted first:
#  tests  test_nn_cuda.py on CUDA, whole (the plan tests with gin-mlp and
#         models.GCN among them)
#  ab     bench/probes/host/gin_mlp_plan_ab.py (plan / walk / PyG, one
#         process) and model_plan_ab.py again
#  layers nn_layers.py --parts host (the final tree)
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
t tests
(cd python/tests && timeout 240 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
  > "$R/pytest.txt" 2>&1)
t ab
timeout 90 python3 bench/probes/host/gin_mlp_plan_ab.py > "$R/ab-gin.txt" 2>&1
timeout 120 python3 bench/probes/host/model_plan_ab.py > "$R/ab-cora.txt" 2>&1
t layers
timeout 150 python3 bench/nn_layers.py --datasets "$D" --parts host > "$R/host.txt" 2>&1
t done
cat "$R/progress.txt"; tail -3 "$R/pytest.txt"; grep -E "^gnnc|^host|^epoch" "$R"/ab-*.txt; grep -E "^\|" "$R/host.txt"
