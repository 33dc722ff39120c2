#!/usr/bin/env bash
# Session 57, call 5 (one GPU), the final build (GAT's and GATv2's bias in
# the op under autocast): (1) the CUDA tests of autocast, half types,
# plans, the layers and bipartite attention; (2) Cora and Citeseer training
# under autocast(bf16) (autocast_accuracy.py, GCN and GAT, 3 seeds), the
# session's start (old) and the final build, gnnc fp32 beside; (3) the
# attention layers' steps under autocast(bf16), old and final.
set -u
source bench/gpu_setup.sh .carry /tmp/r
mkdir -p /tmp/old && tar xJf .carry/old/oldpkg.tar.xz -C /tmp/old
cat $R/device.txt
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 220 python3 -m pytest -q -p no:cacheprovider \
  test_autocast.py test_half.py test_nn_plans.py test_nn_cuda.py test_ir.py \
  "test_nn.py::test_an_input_without_grad_gets_no_gradient_work" \
  > $R/pytest.txt 2>&1)
tail -1 $R/pytest.txt; grep -E "^FAILED" $R/pytest.txt | head -20
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider \
  test_nn.py test_bipartite.py -k "gat or GAT or transformer or Transformer" > $R/pytest-att.txt 2>&1)
tail -1 $R/pytest-att.txt; grep -E "^FAILED" $R/pytest-att.txt | head -20
for pkg in old new; do
  t "train $pkg"
  P=/tmp/pkg; [ $pkg = old ] && P=/tmp/old
  F=""; [ $pkg = new ] && F=--fp32-gnnc
  PYTHONPATH=$P timeout 110 python3 bench/autocast_accuracy.py --seeds 3 $F \
    > $R/train-$pkg.txt 2>&1
  echo "-- train $pkg"; grep -E "gnnc|within" $R/train-$pkg.txt | grep -v '^{'
done
for pkg in old new; do
  t "speed $pkg"
  P=/tmp/pkg; [ $pkg = old ] && P=/tmp/old
  PYTHONPATH=$P timeout 60 python3 bench/nn_layers.py --datasets $D --parts speed \
    --layers gat gatv2 --channels 128 --autocast bf16 --reps 15 > $R/layers-$pkg-bf16.txt 2>&1
  echo "-- $pkg bf16"; grep -E "^\|" $R/layers-$pkg-bf16.txt | tail -5
done
t done
tar czf $OUT/r.tgz -C /tmp r
