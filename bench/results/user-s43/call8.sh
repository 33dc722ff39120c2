#!/usr/bin/env bash
# Call 8 (the session's final kernels, 36a3900): the op-level scoreboard in
# both precisions in one run (bench/scoreboard_both.sh: peers in bf16 and
# fp32, gnnc's forward and forward+backward in bf16 and f32).
# Outputs: tables.md, out.tgz.
bash bench/scoreboard_both.sh .carry "$OUT"
