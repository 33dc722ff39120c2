#!/usr/bin/env bash
# Session 72, call 4 (one GPU): a training forward's residuals in one byte
# tensor (this tree) against HEAD 020a16c (.carry/oldpy + its module):
# bench/gine.py in alternating processes; then this tree's CUDA tests.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
xz -dc .carry/py312old/_gnnc.so.xz > .carry/oldpy/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
NEW=/tmp/pkg OLD=$(realpath .carry/oldpy)
t warm
PYTHONPATH=$OLD timeout 100 python3 bench/gine.py "$D/qm9" --rounds 1 --iters 5 > /dev/null 2>&1
PYTHONPATH=$NEW timeout 100 python3 bench/gine.py "$D/qm9" --rounds 1 --iters 5 > /dev/null 2>&1
for i in 1 2 3; do
  for side in old new; do
    t "gine $side $i"
    P=$OLD; [ $side = new ] && P=$NEW
    echo "### $side $i" >> "$R/gine.txt"
    PYTHONPATH=$P timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 >> "$R/gine.txt" 2>&1
  done
done
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
  > "$R/pytest.txt" 2>&1)
t core
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q -p no:cacheprovider \
  test_core.py test_rgcn.py > "$R/core.txt" 2>&1)
t done
cat "$R/progress.txt"; grep -E "###|forward" "$R/gine.txt"; tail -2 "$R/pytest.txt"; tail -2 "$R/core.txt"
