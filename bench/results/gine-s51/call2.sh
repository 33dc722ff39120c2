#!/usr/bin/env bash
# Session 51, call 2 (one GPU): the grouped outputs (a training forward's
# residuals in one allocation, a backward's parameter gradients in one; no
# workspace allocation where the arena is empty) against HEAD's module, the
# same Python (HEAD's): the CUDA tests of the core and the layers with the
# new module, then bench/gine.py alternating old and new, the op host times
# (gine_bounds.py), Cora GCN epochs.
set -u
source bench/gpu_setup.sh .carry "$OUT"   # /tmp/pkg: this tree's Python, HEAD's module
mkdir -p /tmp/pkgnew; cp -r python/gnnc /tmp/pkgnew/; cp "$B"/py312new/_gnnc*.so /tmp/pkgnew/gnnc/
t tests
(cd python/tests && PYTHONPATH=/tmp/pkgnew GNNC_TEST_DEVICE=cuda timeout 330 python3 -m pytest -q \
   -p no:cacheprovider test_core.py test_nn_cuda.py > "$R/pytest.txt" 2>&1)
tail -1 "$R/pytest.txt" >> "$R/progress.txt"
for r in 1 2; do
  for v in old new; do
    pp=/tmp/pkg; [ $v = new ] && pp=/tmp/pkgnew
    t "gine $v $r"
    PYTHONPATH=$pp python3 bench/gine.py "$D/qm9" --rounds 2 >> "$R/gine-$v.txt" 2>&1
  done
done
for v in old new; do
  pp=/tmp/pkg; [ $v = new ] && pp=/tmp/pkgnew
  t "bounds $v"; echo "== $v" >> "$R/bounds.txt"
  PYTHONPATH=$pp python3 bench/probes/host/gine_bounds.py "$D/qm9" --rounds 2 >> "$R/bounds.txt" 2>&1
  t "cora $v"; echo "== $v" >> "$R/cora-gcn.txt"
  PYTHONPATH=$pp timeout 60 python3 examples/python/train_cora.py --model gcn --seeds 10 \
    --compare-pyg >> "$R/cora-gcn.txt" 2>&1
done
t done
