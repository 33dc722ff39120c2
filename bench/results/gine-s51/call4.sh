#!/usr/bin/env bash
# Session 51, call 4 (one GPU): call 3's phases again with variantOf's
# parts timed apart (found in the op's table, or the lock, the GIL and the
# Python resolver), each phase's worst call and its calls above 20 us.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgphase; cp -r python/gnnc /tmp/pkgphase/
xz -dc "$B"/py312phase/_gnnc*.so.xz > /tmp/pkgphase/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
t phases
PYTHONPATH=/tmp/pkgphase GNNC_OP_PHASES=1 python3 bench/results/gine-s51/op_phases.py "$D/qm9" 2000 \
  > "$R/phases2.txt" 2>&1
t done
