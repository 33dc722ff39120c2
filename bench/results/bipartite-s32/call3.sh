#!/usr/bin/env bash
# Session 32, call 3: the trimmed reddit-like epoch, fused bipartite SAGE
# layer (p1tf) against the session-31 padded layer (p1tfP), six rounds
# interleaved in one process (call 1 had three, on a noisy host); then
# train_ddp.py's own epoch twice.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t probe
ROUNDS=6 PHASES=1 VARIANTS=p1tf,p1tfP timeout 240 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|^p[01]|Error|error" $R/prefetch.txt | head -30
t train
for i in 1 2; do
  timeout 90 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 \
    --epochs 5 > $R/train$i.txt 2>&1
  grep -E "median" $R/train$i.txt
done
t done
