#!/usr/bin/env bash
# Session 31, call 3: where the training loop's thread spends a step, per
# variant (host time by phase), and a cProfile of 40 trimmed steps with
# prefetch=1 (bench/probes/loader/prefetch.py, PHASES=1 PROFILE=p1t).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t probe
ROUNDS=2 PHASES=1 PROFILE=p1t timeout 400 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|median|^p[01]" $R/prefetch.txt | head -20
t done
