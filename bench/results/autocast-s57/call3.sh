#!/usr/bin/env bash
# Session 57, call 3 (one GPU), the committed build: (1) every gnnc.nn
# layer's step through PyTorch under autocast(bf16), the session's start
# (old) against the new build, each beside PyG in its process, 128
# channels, and the new one in float32; (2) Cora and Citeseer training
# (bench/autocast_accuracy.py: GCN and GAT, 3 seeds) under autocast(bf16),
# old and new, with PyG fp32/amp and gnnc fp32 beside; (3) test_ir.py on
# CUDA (the stored-argument test).
set -u
source bench/results/autocast-s57/common.sh
t ir
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 60 python3 -m pytest -q -p no:cacheprovider \
  test_ir.py > $R/pytest-ir.txt 2>&1); tail -1 $R/pytest-ir.txt
L="gcn sage_mean sage_max gin gat gatv2 transformer agnn"
speed_ab "$L" 100 11
speed_f32 "$L" 90 11
train_ab
t done
tar czf $OUT/r.tgz -C /tmp r
