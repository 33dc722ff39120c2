#!/usr/bin/env bash
# Session 81, call 6 (one GPU, on call 5's machine while it was held, so
# call 5's /tmp/run-* were still there): the slice threshold at 512 rows
# (GNNC_X_SLICE=512 of call 5's experiment build: 196 slices at 100K
# nodes, 256 at 250K) against 128 slices and 3dde4bb, SAGE mean and GCN.
# Run as one command line (the `run` tool's), kept here as run. Its two
# "match" lines ran gnn-run without the knob (the variable was set on the
# python that read the result): they checked 128 slices, not 196.
set -u; source bench/gpu_setup.sh .carry "$OUT"; for v in final xk; do [ -x /tmp/run-$v ] || { xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; }; done
one() { local label=$1; shift; env "$@" > /tmp/j 2>&1; python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$label', 'fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" 2>&1 || tail -2 /tmp/j; }
MID="--graph=powerlaw:nodes=250000,edges=2500000,seed=3 --grad --backend=cuda --reps=20 --warmup=3 --no-check"
M2="--graph=powerlaw:nodes=100000,edges=1000000,seed=3 --grad --backend=cuda --reps=20 --warmup=3 --no-check"
for e in sage_mean gcn; do timeout 60 /tmp/run-xk examples/$e.mlir --graph=powerlaw:nodes=100000,edges=1000000,seed=3 --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>&1; GNNC_X_SLICE=512 python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('slice 512 $e 100K match', c.get('match'))"; done
for r in 1 2; do for e in sage_mean gcn; do for cfg in "final 128 0" "xk 128 512" "xk 128 0"; do set -- $cfg; one "r$r $cfg $e 250K" GNNC_X_CHUNKS=$2 GNNC_X_SLICE=$3 timeout 60 /tmp/run-$1 examples/$e.mlir $MID; one "r$r $cfg $e 100K" GNNC_X_CHUNKS=$2 GNNC_X_SLICE=$3 timeout 60 /tmp/run-$1 examples/$e.mlir $M2; done; done; done 2>&1 | tee $OUT/call6.txt
