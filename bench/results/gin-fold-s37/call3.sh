#!/bin/bash
# Session 37, call 3 (final code): attention weights into a max on CUDA
# against the reference; every example's training step on pubmed against
# the reference (autodiff changed); CUDA tests of the op schema (SymInt node
# counts), the compile fix, reorder, hetero pickling.
source bench/gpu_setup.sh .carry "$OUT"
t softmax_max
for g in pubmed musae-github; do
  $B/bin/gnn-run bench/results/gin-fold-s37/inputs/softmax_max.mlir --graph=$D/$g --grad \
    --backend=cuda --reps=3 --warmup=1 > $R/softmax_max-$g.json 2> $R/softmax_max-$g.err
  echo "$g rc=$?" >> $R/softmax_max.txt
done
t autodiff
mkdir -p /tmp/ds && ln -sfn $D/pubmed /tmp/ds/pubmed
EXAMPLES="gcn sage_mean sage_max gin gat gatv2 transformer agnn" timeout 200 \
  bash bench/autodiff_all.sh $B/bin/gnn-run /tmp/ds 8 > $R/autodiff.txt 2>&1 || true
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 300 python3 -m pytest -q -p no:cacheprovider \
  test_core.py test_reorder.py test_bipartite.py test_rgcn.py test_hgt.py test_nn_cuda.py \
  > $R/pytest.txt 2>&1)
t done
