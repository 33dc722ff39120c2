#!/usr/bin/env bash
# Session 25, call 5: models.GCN on PyG's contiguous weights (the function's
# matmul transposes them: linalg.matmul with A Bᵀ maps). A = HEAD 006c5ed,
# B = this tree. CUDA pytest of what changed; gnn-run --grad of gcn3 (the
# transposed matmul, its derivative and the row split) against the
# reference on qm9 and pubmed; molecules.py (the graph_block mapping reads
# the weight per element either way) and Cora's GCN epoch, A against B.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; case $s in A) PYTHONPATH=/tmp/pkgA "$@";; B) PYTHONPATH=/tmp/pkg "$@";; esac; }
xz -dc .carry/bin/gr-M.xz > /tmp/gr; chmod +x /tmp/gr
mkdir -p /tmp/ds; ln -s $D/qm9 /tmp/ds/qm9; ln -s $D/pubmed /tmp/ds/pubmed
( EXAMPLES="gcn3 gcn" timeout 100 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 6 > $R/autodiff.txt 2>&1 ) &
ja=$!
GNNC_TEST_DEVICE=cuda timeout 110 python -m pytest -q -p no:cacheprovider python/tests/test_gcn_model.py python/tests/test_ir.py python/tests/test_nn.py -k "matmul or without_grad or gcn_model or GCN or test_gcn_model" > $R/pytest.txt 2>&1
tail -2 $R/pytest.txt
wait $ja; cat $R/autodiff.txt
for s in A B; do
  echo "== $s" >> $R/molecules.txt
  run $s timeout 60 python3 bench/molecules.py $D/qm9 --rounds 2 >> $R/molecules.txt 2>&1
  echo "== $s" >> $R/cora.txt
  run $s timeout 60 python3 examples/python/train_cora.py --model gcn --seeds 2 --compare-pyg >> $R/cora.txt 2>&1
done
grep -E "==|speed-up" $R/cora.txt; tail -40 $R/molecules.txt
