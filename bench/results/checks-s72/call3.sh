#!/usr/bin/env bash
# Session 72, call 3 (one GPU): host time per phase of gnnc's C++ op calls
# on GINE's model (op_phases.py, the module built with host-timing.patch).
set -u
mkdir -p .carry/py312t
xz -dc .carry/timing/_gnnc.cpython-312-x86_64-linux-gnu.so.xz > .carry/py312t/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
cp .carry/py312t/_gnnc*.so /tmp/pkg/gnnc/
t phases
timeout 200 python3 bench/probes/host/op_phases.py "$D/qm9" > "$R/phases.txt" 2>&1
which perf nsys > "$R/tools.txt" 2>&1
t done
cat "$R/progress.txt"; cat "$R/phases.txt"; cat "$R/tools.txt"
