#!/usr/bin/env bash
# Session 30, call 5: call 4's epochs again in the reverse order (B A Bt At),
# the same trees.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
for s in B A Bt At; do
  if [ ${s:0:1} = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/epoch.txt
  extra=""; [ ${#s} = 2 ] && extra="--trim"
  PYTHONPATH=$pp timeout 80 python3 examples/python/train_ddp.py \
    --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 4 $extra >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
