#!/usr/bin/env bash
# Session 25, call 6: the graph_block kernel reads a transposed weight's
# row 4 elements at a time (float4). molecules.py on QM9 with this tree's
# package (.carry/min: the module and qm9 only), against call5's figures.
set -u
source bench/gpu_setup.sh .carry/min "$OUT"
timeout 70 python3 bench/molecules.py $D/qm9 --rounds 2 > $R/molecules.txt 2>&1
tail -8 $R/molecules.txt
