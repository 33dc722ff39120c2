#!/usr/bin/env bash
# Session 28, call 1. A = HEAD 9c03c9d (its package and module), B = this
# tree: TransformerConv and GINConv/GINEConv with their linear maps inside
# the gnn function, and autodiff without copies of dy and with matmul
# gradients summed in place. Checks first (gnn-run --grad against the
# reference, CUDA pytest), then nn_layers A and B, then gine.py.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/pyA/python/gnnc /tmp/pkgA/; cp $B/py312-A/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
xz -dc .carry/bin/gr.xz > /tmp/gr; chmod +x /tmp/gr
mkdir -p /tmp/ds; ln -s $D/pubmed /tmp/ds/pubmed
t autodiff
( EXAMPLES="gcn gcn3 sage_mean sage_max gin gat gatv2 transformer agnn" timeout 200 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 8 > $R/autodiff.txt 2>&1 ) &
ja=$!
t pytest
GNNC_TEST_DEVICE=cuda timeout 240 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py python/tests/test_autocast.py python/tests/test_half.py > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
GNNC_TEST_DEVICE=cuda timeout 60 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py -k "gin or transformer or GIN or Transformer" > $R/pytest-nn.txt 2>&1
tail -3 $R/pytest-nn.txt
wait $ja
tail -12 $R/autodiff.txt
t layers
for s in A B; do
  run $s timeout 140 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --reps 20 > $R/layers-$s.txt 2>&1
done
for s in A B; do tail -12 $R/layers-$s.txt; done
t gine
for s in A B; do
  echo "== $s" >> $R/gine.txt
  run $s timeout 60 python3 bench/gine.py $D/qm9 --batch 4096 >> $R/gine.txt 2>&1
done
grep -E "==|forward" $R/gine.txt
t end
