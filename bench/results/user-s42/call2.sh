#!/usr/bin/env bash
# Call 2 (the session's final kernels): the op-level scoreboard in both
# precisions in one run (bench/scoreboard_both.sh: peers in bf16 and fp32,
# gnnc's forward and forward+backward in bf16 and f32), then
# bench/probes/host/engine.py (what a backward costs on this host).
# Outputs: tables.md, engine.txt, out.tgz.
set -u
bash bench/scoreboard_both.sh .carry "$OUT"
source bench/gpu_setup.sh .carry "$OUT"
t engine
timeout 100 python3 bench/probes/host/engine.py > $R/engine.txt 2>&1
t done
