#!/usr/bin/env bash
# Session 31, call 7: a graph built ahead is taken as it is (no new entry
# per view); train_ddp.py's defaults now trim and use fused Adam. The
# loader's CUDA tests; the probe (4 rounds: untrimmed/trimmed x foreach/fused
# Adam, all prefetch 1); then train_ddp.py itself, 5 epochs, with its new
# defaults (A) and with the old ones (B: --no-trim --adam foreach), A B A B.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt )
t probe
ROUNDS=4 PHASES=1 VARIANTS=p1,p1f,p1t,p1tf timeout 250 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|^p[01]" $R/prefetch.txt
t train_ddp
G=synthetic:232965:114615892:128:41
for s in A B A B; do
  extra=""; [ $s = B ] && extra="--no-trim --adam foreach"
  echo "== $s $extra" >> $R/train.txt
  timeout 80 python3 examples/python/train_ddp.py --graph $G --epochs 6 $extra >> $R/train.txt 2>&1
done
grep -E "==|median|accuracy" $R/train.txt
t done
