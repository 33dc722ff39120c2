#!/usr/bin/env bash
# Session 51, call 5 (one GPU): the module with the grouped outputs and the
# bound-pointer runs (Executable::runBound; `.carry/py312`) against HEAD's
# (`.carry/py312old`, xz), this tree's Python for both: the CUDA tests of
# the core and the layers and the runtime's GPU gtests with the new module,
# then bench/gine.py (old and new alternating), the op calls' host time
# (gine_bounds.py) and every layer's host time per call (nn_layers.py
# --parts host).
set -u
source bench/gpu_setup.sh .carry "$OUT"   # /tmp/pkg: the new module
mkdir -p /tmp/pkgold; cp -r python/gnnc /tmp/pkgold/
xz -dc "$B"/py312old/_gnnc*.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc "$B"/bin/GNNRuntimeTests.xz > /tmp/GNNRuntimeTests; chmod +x /tmp/GNNRuntimeTests
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 300 python3 -m pytest -q \
   -p no:cacheprovider test_core.py test_nn_cuda.py > "$R/pytest.txt" 2>&1)
tail -1 "$R/pytest.txt" >> "$R/progress.txt"
t gtest
GNNC_TEST_DATASETS=$D timeout 120 /tmp/GNNRuntimeTests --gtest_filter='Gpu*' > "$R/gtest.txt" 2>&1
echo "rc=$?" >> "$R/gtest.txt"; tail -3 "$R/gtest.txt" >> "$R/progress.txt"
for r in 1 2; do
  for v in old new; do
    pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
    t "gine $v $r"; echo "== $v $r" >> "$R/gine.txt"
    PYTHONPATH=$pp python3 bench/gine.py "$D/qm9" --rounds 2 >> "$R/gine.txt" 2>&1
  done
done
for v in old new; do
  pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
  t "bounds $v"; echo "== $v" >> "$R/bounds.txt"
  PYTHONPATH=$pp python3 bench/probes/host/gine_bounds.py "$D/qm9" --rounds 2 >> "$R/bounds.txt" 2>&1
  t "host $v"; echo "== $v" >> "$R/host.txt"
  PYTHONPATH=$pp timeout 150 python3 bench/nn_layers.py --datasets "$D" --parts host >> "$R/host.txt" 2>&1
done
t done
