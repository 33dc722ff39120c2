#!/usr/bin/env bash
# Session 75, call 2 (one GPU): the final tree's Python (3846d04 +
# 2dcb075) against e2f7fba's (old), the same module: bench/gine.py in four
# alternating pairs of processes, the new side at batches of 1,024 and
# 16,384 molecules, gine_segments.py; the CUDA tests of the layers
# (test_nn_cuda.py), of the ops (test_core.py) and of the functions whose
# training steps keep graph-sized inputs out of autograd's saved tensors
# (test_rgcn.py, test_typed.py, test_bipartite.py, test_hgt.py with
# GNNC_TEST_DEVICE=cuda; interrupted with SIGINT at their time limit so
# that pytest still prints its summary). Outputs in out.tgz.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgold; cp -r .carry/oldpy75/gnnc /tmp/pkgold/; cp /tmp/pkg/gnnc/_gnnc*.so /tmp/pkgold/gnnc/
O=/tmp/o75b; rm -rf $O; mkdir -p $O
t gine
for i in 1 2 3 4; do
  PYTHONPATH=/tmp/pkgold timeout 60 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 60 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
t batches
for b in 1024 16384; do
  timeout 90 python3 bench/gine.py "$D/qm9" --rounds 3 --batch $b > $O/gine-new-b$b.txt 2>&1
done
t segments
timeout 80 python3 bench/probes/host/gine_segments.py "$D/qm9" --steps 150 > $O/segments-new.txt 2>&1
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py > $O/nn_cuda.txt 2>&1)
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 100 python3 -m pytest -q -p no:cacheprovider test_core.py > $O/core.txt 2>&1)
t typed
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout -s INT 150 python3 -m pytest -q -p no:cacheprovider \
  test_rgcn.py test_typed.py test_bipartite.py test_hgt.py > $O/typed.txt 2>&1)
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
tail -22 $O/segments-new.txt
tail -1 $O/nn_cuda.txt; tail -1 $O/core.txt; tail -3 $O/typed.txt
