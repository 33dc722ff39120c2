#!/usr/bin/env bash
# Session 34, call 9: the two runs of test/Integration/grad-check-residuals.test
# (no lit on the GPU machine: their JSON comes back and FileCheck runs here).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t runs
$B/bin/gnn-run test/Integration/Inputs/fused_aggregation.mlir --grad --graph=powerlaw:nodes=20000,edges=200000,seed=1 --backend=cuda --reps=1 --warmup=0 > $R/edgemax.json 2> $R/edgemax.err; echo "rc=$?"
$B/bin/gnn-run examples/gcn.mlir --grad --graph=powerlaw:nodes=20000,edges=200000,seed=1 --backend=cuda --reps=1 --warmup=0 > $R/gcn.json 2> $R/gcn.err; echo "rc=$?"
t end
