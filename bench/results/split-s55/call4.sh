#!/usr/bin/env bash
# Session 55, call 4 (one GPU): both op-level scoreboards again with the
# turbo-gnn wheel carried (call 3's ran without it: cuSPARSE alone), the
# same build as call 3. gnnc's forward runs --no-check here: call 3 checked
# this build's every scoreboard op on the four small graphs against the
# reference (all matched), which the reference's time would not fit twice
# into the session's device time.
set -u
export GNNC_OPS_FLAGS=--no-check
timeout 330 bash bench/scoreboard_both.sh .carry2 "$OUT"
grep -E "^forward|^##" $OUT/tables.md
