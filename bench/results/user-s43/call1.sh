#!/usr/bin/env bash
# Call 1: where pubmed's host-bound steps go (bench/probes/host/launches.py),
# gnnc and PyG, default and calling-thread backward.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t default
timeout 150 python3 bench/probes/host/launches.py $D/pubmed > $R/launches-default.txt 2>&1
t calling
timeout 150 python3 bench/probes/host/launches.py $D/pubmed --calling-thread > $R/launches-calling.txt 2>&1
t done
