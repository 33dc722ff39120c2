#!/usr/bin/env bash
# Session 57, call 5 (one GPU), the final build (GAT's and GATv2's bias in
# the op under autocast): (1) the CUDA tests of autocast, half types,
# plans, the layers and bipartite attention; (2) Cora and Citeseer training
# under autocast(bf16) (autocast_accuracy.py, GCN and GAT, 3 seeds), the
# session's start (old) and the final build, gnnc fp32 beside; (3) the
# attention layers' steps under autocast(bf16), old and final.
set -u
source bench/results/autocast-s57/common.sh
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 220 python3 -m pytest -q -p no:cacheprovider \
  test_autocast.py test_half.py test_nn_plans.py test_nn_cuda.py test_ir.py \
  "test_nn.py::test_an_input_without_grad_gets_no_gradient_work" \
  > $R/pytest.txt 2>&1)
tail -1 $R/pytest.txt; grep -E "^FAILED" $R/pytest.txt | head -20
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider \
  test_nn.py test_bipartite.py -k "gat or GAT or transformer or Transformer" > $R/pytest-att.txt 2>&1)
tail -1 $R/pytest-att.txt; grep -E "^FAILED" $R/pytest-att.txt | head -20
train_ab
speed_ab "gat gatv2" 60 5
t done
tar czf $OUT/r.tgz -C /tmp r
