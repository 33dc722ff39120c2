#!/usr/bin/env bash
# Session 49, call 1 (one GPU): GIN's and GINE's call plans (conv._GinPlan)
# against HEAD's Python (`.carry/pyold`), the same native module; then the
# CUDA tests of the change. Run from the repository root with $OUT set.
set -u
export PATH=/usr/local/cuda/bin:$PATH
B=$(realpath .carry); R=$OUT; D=$B/datasets
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$R/device.txt"
for v in old new; do mkdir -p /tmp/pkg-$v; done
cp -r "$B/pyold/python/gnnc" /tmp/pkg-old/; cp -r python/gnnc /tmp/pkg-new/
for v in old new; do cp "$B"/py312/_gnnc*.so /tmp/pkg-$v/gnnc/; done
export GNNC_DATASETS=$D GNNC_CACHE_DIR=/tmp/gnnc-kernels
mkdir -p -m 700 /tmp/gnnc-kernels
t() { echo "== $1 $(date +%T)" >> "$R/progress.txt"; }
t warm
PYTHONPATH=/tmp/pkg-new python3 bench/gine.py "$D/qm9" --iters 5 --warmup 2 --rounds 1 > /dev/null 2>&1
# GINE on QM9 (issue 31): three rounds, the two Pythons in alternating processes.
for r in 1 2 3; do
  for v in old new; do
    t "gine $v $r"
    PYTHONPATH=/tmp/pkg-$v python3 bench/gine.py "$D/qm9" --rounds 3 >> "$R/gine-$v.txt" 2>&1
  done
done
# GIN per layer (issue 28's table; nn = one Linear) and its host time.
for r in 1 2; do
  for v in old new; do
    t "layers $v $r"
    PYTHONPATH=/tmp/pkg-$v python3 bench/nn_layers.py --datasets "$D" --layers gin \
      >> "$R/layers-$v.txt" 2>&1
  done
done
t tests
(cd python/tests && PYTHONPATH=/tmp/pkg-new python3 -m pytest -q -p no:cacheprovider \
   test_nn_cuda.py -k "gin or GIN or cached or plans" > "$R/pytest.txt" 2>&1)
tail -2 "$R/pytest.txt" >> "$R/progress.txt"
t done
