#!/usr/bin/env bash
# Call 4: the parts of a layer's training forward (bench/probes/host/op_parts.py).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t parts
timeout 200 python3 bench/probes/host/op_parts.py > $R/parts.txt 2>&1
timeout 200 python3 bench/probes/host/op_parts.py > $R/parts2.txt 2>&1
t done
