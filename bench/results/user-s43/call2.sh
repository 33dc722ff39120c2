#!/usr/bin/env bash
# Call 2: the host breakdown of a layer forward (bench/probes/host/breakdown.py:
# the layer, its gnnc op alone, the graph lookup, cProfile of its Python) on
# the 1,000-node graph.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t breakdown
timeout 200 python3 bench/probes/host/breakdown.py sage_mean gin gcn > $R/breakdown.txt 2>&1
t done
