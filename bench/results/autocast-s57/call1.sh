#!/usr/bin/env bash
# Session 57, call 1 (one GPU): the operands converted inside the op under
# torch.autocast (no aten::to around it) and GCN/SAGE/GIN plans under
# autocast. (1) Layer steps through PyTorch under autocast(bf16), gnnc of
# the session's start (old: .carry/old) against the new one, each beside
# PyG in the same process; the new one in float32 too; (2) where a SAGE max
# step's time goes (autocast_profile.py of session 56) on the new build.
set -u
source bench/gpu_setup.sh .carry /tmp/r
mkdir -p /tmp/old && tar xJf .carry/old/oldpkg.tar.xz -C /tmp/old
cat $R/device.txt
L="gcn sage_max gin gat"
for pkg in old new; do
  t "speed $pkg"
  P=/tmp/pkg; [ $pkg = old ] && P=/tmp/old
  PYTHONPATH=$P timeout 150 python3 bench/nn_layers.py --datasets $D --parts speed \
    --layers $L --channels 128 --autocast bf16 --reps 15 > $R/layers-$pkg-bf16.txt 2>&1
  grep -E "^\|" $R/layers-$pkg-bf16.txt
done
t "speed new f32"
timeout 110 python3 bench/nn_layers.py --datasets $D --parts speed --layers $L --channels 128 \
  --reps 15 > $R/layers-new-f32.txt 2>&1
grep -E "^\|" $R/layers-new-f32.txt
t profile
timeout 50 python3 bench/results/maxpull-s56/autocast_profile.py $D > $R/profile.txt 2>&1
grep -E "step" $R/profile.txt
t done
tar czf $OUT/r.tgz -C /tmp r
