#!/usr/bin/env bash
# Session 26, call 7: the final tree's checks on the GPU (after the
# sumRowLoop refactor): gnn-run --grad against the reference on pubmed, and
# the CUDA pytest of the layers with column-mode sums and the GEMM bias.
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc .carry/bin/gr.xz > /tmp/gr; chmod +x /tmp/gr
mkdir -p /tmp/ds; ln -s $D/pubmed /tmp/ds/pubmed
t autodiff
( EXAMPLES="gcn gcn3 sage_mean gin gat gatv2 transformer agnn" timeout 150 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 8 > $R/autodiff.txt 2>&1 ) &
ja=$!
t pytest
GNNC_TEST_DEVICE=cuda timeout 150 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_gcn_model.py -k "sage or SAGE or gat or GAT or gcn or GCN" > $R/pytest.txt 2>&1
tail -2 $R/pytest.txt
wait $ja
tail -10 $R/autodiff.txt
t end
