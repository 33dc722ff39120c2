#!/usr/bin/env bash
# Session 26, call 1. A = HEAD 55f29a9's package and module (.carry/oldpy,
# .carry/py312-old), B = this tree: the bias gradient's column sums in
# column mode, matmuls adding into the previous term in place, the
# graph_block kernel reading a transposed weight's rows as float4, and
# GCNConv/SAGEConv as one gnn function each (whole-layer v2, the SAGE terms
# summed by accumulating matmuls). Checks first (gnn-run --grad against the
# reference, CUDA pytest), then speed: molecules (graph_block), large.py's
# SAGE profile, the reddit-like sampled SAGE epoch, nn_layers.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
xz -dc .carry/bin/gr.xz > /tmp/gr; chmod +x /tmp/gr
mkdir -p /tmp/ds; ln -s $D/pubmed /tmp/ds/pubmed
t autodiff
( EXAMPLES="gcn gcn3 sage_mean gin gat gatv2 transformer" timeout 240 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 7 > $R/autodiff.txt 2>&1 ) &
ja=$!
t pytest
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider -x python/tests/test_nn.py python/tests/test_gcn_model.py python/tests/test_ir.py -k "gcn or GCN or sage or SAGE or without_grad or matmul" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
wait $ja
tail -10 $R/autodiff.txt
t molecules
for s in A B; do
  echo "== $s" >> $R/molecules.txt
  run $s timeout 60 python3 bench/molecules.py $D/qm9 --rounds 2 >> $R/molecules.txt 2>&1
done
grep -E "==|models.GCN|gnnc|diff" $R/molecules.txt | head -30
t large
for s in A B; do
  echo "== $s" >> $R/large.txt
  run $s timeout 60 python3 bench/probes/hostsplit/large.py --layers sage --nodes 150000 --edges 300000 --no-input-grad --profile --rows 30 >> $R/large.txt 2>&1
done
grep -E "==|fwd\+bwd" $R/large.txt
t end
