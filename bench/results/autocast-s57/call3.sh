#!/usr/bin/env bash
# Session 57, call 3 (one GPU), the committed build: (1) every gnnc.nn
# layer's step through PyTorch under autocast(bf16), the session's start
# (old) against the new build, each beside PyG in its process, 128
# channels, and the new one in float32; (2) Cora and Citeseer training
# (bench/autocast_accuracy.py: GCN and GAT, 3 seeds) under autocast(bf16),
# old and new, with PyG fp32/amp and gnnc fp32 beside; (3) test_ir.py on
# CUDA (the stored-argument test).
set -u
source bench/gpu_setup.sh .carry /tmp/r
mkdir -p /tmp/old && tar xJf .carry/old/oldpkg.tar.xz -C /tmp/old
cat $R/device.txt
t ir
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 60 python3 -m pytest -q -p no:cacheprovider \
  test_ir.py > $R/pytest-ir.txt 2>&1); tail -1 $R/pytest-ir.txt
L="gcn sage_mean sage_max gin gat gatv2 transformer agnn"
for pkg in old new; do
  t "speed $pkg"
  P=/tmp/pkg; [ $pkg = old ] && P=/tmp/old
  PYTHONPATH=$P timeout 100 python3 bench/nn_layers.py --datasets $D --parts speed \
    --layers $L --channels 128 --autocast bf16 --reps 15 > $R/layers-$pkg-bf16.txt 2>&1
  echo "-- $pkg bf16"; grep -E "^\|" $R/layers-$pkg-bf16.txt | tail -11
done
t "speed new f32"
timeout 90 python3 bench/nn_layers.py --datasets $D --parts speed --layers $L --channels 128 \
  --reps 15 > $R/layers-new-f32.txt 2>&1
echo "-- new f32"; grep -E "^\|" $R/layers-new-f32.txt | tail -11
for pkg in old new; do
  t "train $pkg"
  P=/tmp/pkg; [ $pkg = old ] && P=/tmp/old
  F=""; [ $pkg = new ] && F=--fp32-gnnc
  PYTHONPATH=$P timeout 110 python3 bench/autocast_accuracy.py --seeds 3 $F \
    > $R/train-$pkg.txt 2>&1
  echo "-- train $pkg"; grep -v '^{' $R/train-$pkg.txt | tail -25
done
t done
tar czf $OUT/r.tgz -C /tmp r
