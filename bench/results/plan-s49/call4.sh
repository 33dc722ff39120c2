#!/usr/bin/env bash
# Session 49, call 4 (one GPU): the final tree (e731017) — the GIN/GINE and
# cached-call CUDA tests, and bench/gine.py once more, HEAD's Python (old)
# and this tree's (new) alternating.
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
t tests
(cd python/tests && PYTHONPATH=/tmp/pkg-new python3 -m pytest -q -p no:cacheprovider \
   test_nn_cuda.py -k "gin or GIN or cached or plans" > "$R/pytest.txt" 2>&1)
tail -1 "$R/pytest.txt" >> "$R/progress.txt"
for r in 1 2; do
  for v in old new; do
    t "gine $v $r"
    PYTHONPATH=/tmp/pkg-$v python3 bench/gine.py "$D/qm9" --rounds 3 >> "$R/gine-$v.txt" 2>&1
  done
done
t done
