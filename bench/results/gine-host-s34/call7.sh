#!/usr/bin/env bash
# Session 34, call 7: where a GINE step's host time goes under
# torch.compile (gnnc slower compiled than eager in call 6).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t probe
timeout 300 python3 bench/probes/host/gine_compiled.py $D/qm9 > $R/compiled.txt 2>&1
grep -E "step|Name|^-" $R/compiled.txt | head -4; grep -A14 "^compiled" $R/compiled.txt | cut -c1-150
t end
