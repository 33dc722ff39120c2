#!/usr/bin/env bash
# Session 28, call 4. A = HEAD 9c03c9d, B = this tree, now with GATConv's
# projection (and bias) in its function too. CUDA tests of GAT; Cora and
# Citeseer epochs (train_cora.py --compare-pyg, eager), A and B; nn_layers
# for GAT and the Transformer, A and B.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/pyA/python/gnnc /tmp/pkgA/; cp $B/py312-A/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
t pytest
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py python/tests/test_nn.py python/tests/test_autocast.py python/tests/test_bipartite.py python/tests/test_ir.py -k "gat or GAT" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
timeout 100 python3 bench/probes/fold/layers_cuda.py > $R/probe.txt 2>&1; tail -1 $R/probe.txt
t epochs
for s in A B; do
  for m in gcn gat; do
    echo "== $s cora $m" >> $R/epochs.txt
    run $s timeout 100 python3 examples/python/train_cora.py --model $m --seeds 10 --compare-pyg >> $R/epochs.txt 2>&1
    echo "== $s citeseer $m" >> $R/epochs.txt
    run $s timeout 60 python3 examples/python/train_cora.py --dataset citeseer --model $m --seeds 3 --compare-pyg >> $R/epochs.txt 2>&1
  done
done
grep -E "==|epoch|speed" $R/epochs.txt | head -60
t layers
for s in A B; do
  run $s timeout 80 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --reps 30 --layers gat transformer > $R/layers-$s.txt 2>&1
done
for s in A B; do tail -6 $R/layers-$s.txt; done
t end
