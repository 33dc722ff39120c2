#!/usr/bin/env bash
# Session 28, call 7: GIN and GINE fold the whole Linear/ReLU prefix of nn
# (gine.py's MLP Linear, ReLU, Linear entirely). CUDA tests of GIN/GINE and
# the probe; gine.py A/B alternated; nn_layers GIN A/B.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/pyA/python/gnnc /tmp/pkgA/; cp $B/py312-A/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
t pytest
GNNC_TEST_DEVICE=cuda timeout 70 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py python/tests/test_nn.py python/tests/test_ir.py -k "gin or GIN" > $R/pytest.txt 2>&1
tail -2 $R/pytest.txt
timeout 40 python3 bench/probes/fold/layers_cuda.py > $R/probe.txt 2>&1; tail -1 $R/probe.txt
t gine
for s in A B A B; do
  echo "== $s" >> $R/gine.txt
  run $s timeout 25 python3 bench/gine.py $D/qm9 --batch 4096 >> $R/gine.txt 2>&1
done
grep -E "==|forward" $R/gine.txt
t layers
for s in A B; do
  run $s timeout 25 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --reps 20 --layers gin > $R/layers-$s.txt 2>&1
done
for s in A B; do tail -4 $R/layers-$s.txt; done
t end
