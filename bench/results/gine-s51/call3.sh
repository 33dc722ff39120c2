#!/usr/bin/env bash
# Session 51, call 3 (one GPU): where an op call's host time goes
# (phases.patch's module, `.carry/py312phase`, on call 2's tree), and
# whether the training step's gradients repeat bitwise with HEAD's module
# (`.carry/py312old`) and the grouped outputs' (`.carry/py312`); the
# extra modules travel xz-compressed.
set -u
source bench/gpu_setup.sh .carry "$OUT"   # /tmp/pkg: the grouped outputs' module
for v in phase old; do
  mkdir -p /tmp/pkg$v; cp -r python/gnnc /tmp/pkg$v/
  xz -dc "$B"/py312$v/_gnnc*.so.xz > /tmp/pkg$v/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
done
t phases
PYTHONPATH=/tmp/pkgphase GNNC_OP_PHASES=1 python3 bench/results/gine-s51/op_phases.py "$D/qm9" 2000 \
  > "$R/phases.txt" 2>&1
t repeat
for v in old new old new; do
  pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
  echo "== $v" >> "$R/repeat.txt"
  PYTHONPATH=$pp python3 bench/results/gine-s51/repeat.py "$D/qm9" >> "$R/repeat.txt" 2>&1
done
t done
