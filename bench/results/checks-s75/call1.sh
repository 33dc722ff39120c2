#!/usr/bin/env bash
# Session 75, call 1 (one GPU): the planned layer call's Python trimmed
# (the function chosen kept per plan, Function._launch, _StepLayout's
# item getters, the wrapper check mapped) against e2f7fba's Python (old),
# the same module: bench/gine.py in alternating processes, gine_segments.py
# gine_layer_host.py and nn_layers.py --parts host (issue 28's host time
# per call) for both; test_nn_cuda.py and test_core.py on
# CUDA for the new tree; py-spy's native samples of the new step (100 Hz).
# Outputs in out.tgz.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgold; cp -r .carry/oldpy75/gnnc /tmp/pkgold/; cp /tmp/pkg/gnnc/_gnnc*.so /tmp/pkgold/gnnc/
O=/tmp/o75; rm -rf $O; mkdir -p $O
t gine
for i in 1 2 3; do
  PYTHONPATH=/tmp/pkgold timeout 60 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 60 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
t layer
for side in old new; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  PYTHONPATH=$pp timeout 60 python3 bench/probes/host/gine_layer_host.py "$D/qm9" --device cuda --batch 4096 > $O/layer-$side.txt 2>&1
done
t host
for side in old new; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  PYTHONPATH=$pp timeout 90 python3 bench/nn_layers.py --datasets "$D" --parts host > $O/host-$side.txt 2>&1
done
t segments
for side in new old; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  PYTHONPATH=$pp timeout 80 python3 bench/probes/host/gine_segments.py "$D/qm9" --steps 150 > $O/segments-$side.txt 2>&1
done
t pyspy
timeout 90 .carry/pyspy/py-spy record --native -r 100 -f raw -o $O/spy-gnnc.txt -- \
  python3 bench/probes/host/gine_segments.py "$D/qm9" --loop 8 --side gnnc > $O/spy-gnnc.log 2>&1
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py > $O/nn_cuda.txt 2>&1)
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 100 python3 -m pytest -q -p no:cacheprovider test_core.py > $O/core.txt 2>&1)
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
cat $O/layer-old.txt $O/layer-new.txt; tail -14 $O/host-old.txt $O/host-new.txt; tail -22 $O/segments-new.txt; tail -3 $O/segments-old.txt
tail -1 $O/nn_cuda.txt; tail -1 $O/core.txt; tail -2 $O/spy-gnnc.log; ls -la $O/spy-gnnc.txt
