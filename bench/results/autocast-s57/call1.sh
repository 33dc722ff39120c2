#!/usr/bin/env bash
# Session 57, call 1 (one GPU): the operands converted inside the op under
# torch.autocast (no aten::to around it) and GCN/SAGE/GIN plans under
# autocast. (1) Layer steps through PyTorch under autocast(bf16), gnnc of
# the session's start (old: .carry/old) against the new one, each beside
# PyG in the same process; the new one in float32 too; (2) where a SAGE max
# step's time goes (autocast_profile.py of session 56) on the new build.
set -u
source bench/results/autocast-s57/common.sh
L="gcn sage_max gin gat"
speed_ab "$L" 150 40
speed_f32 "$L" 110 40
t profile
timeout 50 python3 bench/results/maxpull-s56/autocast_profile.py $D > $R/profile.txt 2>&1
grep -E "step" $R/profile.txt
t done
tar czf $OUT/r.tgz -C /tmp r
