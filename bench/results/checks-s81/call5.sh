#!/usr/bin/env bash
# Session 81, call 5 (one GPU): call 4 found SAGE mean's backward 11 %
# slower on a 1M-node graph with 128 row-split blocks. An experiment build
# (.carry/xk: the committed tree with env knobs GNNC_X_CHUNKS, the base
# block count, and GNNC_X_SLICE, the rows a slice above which up to 256
# blocks are used; 0: never) against 3dde4bb (.carry/final).
set -u
S0=$(date +%s)
left() { echo $(( 400 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/final/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in final xk; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
t refs
for e in gcn sage_mean gin; do
  GNNC_X_SLICE=64 timeout 60 /tmp/run-xk examples/$e.mlir --graph=$D/pubmed --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('slice 64 (256 slices) $e pubmed match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
done
one() { # label, env..., then gnn-run args
  local label=$1; shift
  env "$@" > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$label', 'fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -2 /tmp/j >> $R/steps.txt
}
t big
BIG="--graph=powerlaw:nodes=1000000,edges=10000000,seed=3 --grad --backend=cuda --reps=10 --warmup=2 --no-check"
MID="--graph=powerlaw:nodes=250000,edges=2500000,seed=3 --grad --backend=cuda --reps=20 --warmup=3 --no-check"
for round in 1 2; do
  for e in sage_mean gcn gin; do
    for cfg in "final 128 0" "xk 128 0" "xk 128 2048" "xk 256 0"; do
      set -- $cfg
      [ $(left) -lt 60 ] && break
      one "r$round $cfg $e 1M/10M" GNNC_X_CHUNKS=$2 GNNC_X_SLICE=$3 timeout 60 /tmp/run-$1 examples/$e.mlir $BIG
    done
  done
  for e in sage_mean gcn; do
    for cfg in "final 128 0" "xk 128 0" "xk 256 0"; do
      set -- $cfg
      [ $(left) -lt 40 ] && break
      one "r$round $cfg $e 250K/2.5M" GNNC_X_CHUNKS=$2 GNNC_X_SLICE=$3 timeout 60 /tmp/run-$1 examples/$e.mlir $MID
    done
  done
done
t gine
G=".carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda --reps=50 --warmup=5 --no-check"
for cfg in "final 128 0" "xk 128 2048" "final 128 0" "xk 128 2048"; do
  set -- $cfg
  [ $(left) -lt 10 ] && break
  one "$cfg gine4096" GNNC_X_CHUNKS=$2 GNNC_X_SLICE=$3 timeout 30 /tmp/run-$1 $G
done
t end
cat $R/steps.txt
