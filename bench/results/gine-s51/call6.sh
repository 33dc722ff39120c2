#!/usr/bin/env bash
# Session 51, call 6 (one GPU): the final tree's module (`.carry/py312`:
# grouped outputs and Executable::runBound) against HEAD's before this
# session (`.carry/py312old`, xz), the same Python: the runtime's GPU
# gtests and test_core.py on CUDA with the new module; bench/gine.py, Cora
# GCN and GAT epochs and nn_layers.py's host times, old and new alternating.
set -u
source bench/gpu_setup.sh .carry "$OUT"   # /tmp/pkg: the new module
mkdir -p /tmp/pkgold; cp -r python/gnnc /tmp/pkgold/
xz -dc "$B"/py312old/_gnnc*.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc "$B"/bin/GNNRuntimeTests.xz > /tmp/GNNRuntimeTests; chmod +x /tmp/GNNRuntimeTests
t gtest
GNNC_TEST_DATASETS=$D timeout 120 /tmp/GNNRuntimeTests --gtest_filter='Gpu*' > "$R/gtest.txt" 2>&1
echo "rc=$?" >> "$R/gtest.txt"; grep -E "RunBound|PASSED|FAILED" "$R/gtest.txt" >> "$R/progress.txt"
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q \
   -p no:cacheprovider test_core.py > "$R/pytest.txt" 2>&1)
tail -1 "$R/pytest.txt" >> "$R/progress.txt"
for r in 1 2 3; do
  for v in old new; do
    pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
    t "gine $v $r"; echo "== $v $r" >> "$R/gine.txt"
    PYTHONPATH=$pp python3 bench/gine.py "$D/qm9" --rounds 2 >> "$R/gine.txt" 2>&1
  done
done
for m in gcn gat; do
  for v in old new; do
    pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
    t "cora $m $v"; echo "== $m $v" >> "$R/cora.txt"
    PYTHONPATH=$pp timeout 60 python3 examples/python/train_cora.py --model $m --seeds 10 \
      --compare-pyg >> "$R/cora.txt" 2>&1
  done
done
for v in old new; do
  pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
  t "host $v"; echo "== $v" >> "$R/host.txt"
  PYTHONPATH=$pp timeout 150 python3 bench/nn_layers.py --datasets "$D" --parts host >> "$R/host.txt" 2>&1
done
t done
