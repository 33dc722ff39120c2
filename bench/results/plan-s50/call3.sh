#!/usr/bin/env bash
# Session 50, call 3 (one GPU): GATConv's call plan (attention._GatPlan)
# against the tree before it (`.carry/pyold`: HEAD's Python, with the GCN
# plan), the same native module: the CUDA tests of the plans, the host time
# per GAT call (nn_layers.py's host part), Cora's 2-layer GAT (10 seeds,
# eager, against PyG). Run from the repository root with $OUT set.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgold; cp -r "$B/pyold/python/gnnc" /tmp/pkgold/; cp "$B"/py312/_gnnc*.so /tmp/pkgold/gnnc/
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 100 python3 -m pytest -q -p no:cacheprovider \
   test_nn_cuda.py -k "plans or cached_calls" > "$R/pytest.txt" 2>&1)
tail -1 "$R/pytest.txt" >> "$R/progress.txt"
for r in 1; do
  for v in old new; do
    pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
    t "host $v $r"
    PYTHONPATH=$pp timeout 40 python3 bench/nn_layers.py --datasets "$D" --layers gat \
      --parts host >> "$R/host-$v.txt" 2>&1
  done
done
for v in old new; do
  pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
  t "cora $v"
  PYTHONPATH=$pp timeout 60 python3 examples/python/train_cora.py --model gat --seeds 10 \
    --compare-pyg > "$R/cora-gat-$v.txt" 2>&1
done
t done
