#!/usr/bin/env bash
# Session 50, call 1 (one GPU): GCNConv's call plan (conv._GcnPlan) against
# HEAD's Python (`.carry/pyold`), the same native module: the CUDA tests of
# the plans, the host time per call (nn_layers.py's host part: a cached
# 1,000-node graph, and a 2-layer GCN step on Cora), Cora epochs (10 seeds,
# eager, against PyG). Run from the repository root with $OUT set.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgold; cp -r "$B/pyold/python/gnnc" /tmp/pkgold/; cp "$B"/py312/_gnnc*.so /tmp/pkgold/gnnc/
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider \
   test_nn_cuda.py -k "plans or cached_calls" > "$R/pytest.txt" 2>&1)
tail -1 "$R/pytest.txt" >> "$R/progress.txt"
for r in 1 2; do
  for v in old new; do
    pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
    t "host $v $r"
    PYTHONPATH=$pp timeout 60 python3 bench/nn_layers.py --datasets "$D" --layers gcn \
      --parts host >> "$R/host-$v.txt" 2>&1
  done
done
for v in old new; do
  pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
  t "cora $v"
  PYTHONPATH=$pp timeout 90 python3 examples/python/train_cora.py --model gcn --seeds 10 \
    --compare-pyg > "$R/cora-gcn-$v.txt" 2>&1
done
t done
