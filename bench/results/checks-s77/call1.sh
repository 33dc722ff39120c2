#!/usr/bin/env bash
# Session 77, call 1 (one GPU), as it ran: session 76's call 3
# (bench/results/checks-s76/call3.sh, sourced: gnn-run --grad on GINE's
# layer function with and without GNNC_CONCURRENT_LAUNCHES=0, GIN and GCN
# on pubmed, gine_layer_calls.py), then bench/gine.py and
# gine_segments.py. Carried: .carry/datasets, .carry/s76 (this tree's
# module and gnn-run, xz).
source bench/results/checks-s76/call3.sh
t gine
timeout 120 python3 bench/gine.py $D/qm9 --out $O/gine.json > $O/gine.txt 2>&1; tail -6 $O/gine.txt
t segments
timeout 90 python3 bench/probes/host/gine_segments.py $D/qm9 --steps 150 > $O/segments.txt 2>&1
tail -40 $O/segments.txt
t end
