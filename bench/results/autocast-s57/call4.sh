#!/usr/bin/env bash
# Session 57, call 4 (one GPU): where a Cora GAT and GCN training step's
# time goes under autocast(bf16) against float32 (gat_profile.py), the
# committed build.
set -u
source bench/gpu_setup.sh .carry /tmp/r
cat $R/device.txt
for m in gat gcn; do
  t "profile $m"
  timeout 90 python3 bench/results/autocast-s57/gat_profile.py $D $m > $R/profile-$m.txt 2>&1
  grep -E "step" $R/profile-$m.txt
done
t done
tar czf $OUT/r.tgz -C /tmp r
