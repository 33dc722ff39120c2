#!/usr/bin/env bash
# Session 27, call 1: where the host time of a gnnc.nn layer call goes on the
# GPU machine (issue 28): split.py (ops vs the rest, PyG beside), PyTorch's
# floor and the CUDA API calls inside one op call (floor.py).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t split
timeout 120 python3 bench/probes/hostsplit/split.py --layers gcn,sage,gin,gat --calls 1000 > $R/split.txt 2>&1
t floor
for l in gcn sage; do timeout 90 python3 bench/probes/host/floor.py $l > $R/floor-$l.txt 2>&1; done
t end
