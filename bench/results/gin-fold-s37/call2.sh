#!/bin/bash
# Session 37, call 2: CUDA tests of this session's fixes (autograd keeps the
# graph, attention weights into max/min, traced in-place/where/item/NaN
# fixes); Cora/Citeseer epochs with the whole-model GCN (models.GCN on both
# sides) beside the 2-layer GCNConv model.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 330 python3 -m pytest -q -p no:cacheprovider \
  test_message_passing.py test_core.py test_nan.py test_mp_layers.py > $R/pytest.txt 2>&1)
t cora
for ds in cora citeseer; do
  s=10; [ $ds = citeseer ] && s=3
  for m in gcn gcn-model; do
    timeout 120 python3 examples/python/train_cora.py --model $m --dataset $ds --seeds $s --compare-pyg >> $R/epochs.txt 2>>$R/epochs.err
  done
done
t done
