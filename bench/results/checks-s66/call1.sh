#!/usr/bin/env bash
# Session 66, call 1 (one GPU): issue 29's reddit-like table
# (bench/issue29_reddit.sh) with the binaries of HEAD e494873.
set -u
PEER_T=150 bash bench/issue29_reddit.sh .carry "$OUT"
cat "$OUT"/own.md "$OUT"/table-fp32.md "$OUT"/table-bf16.md
