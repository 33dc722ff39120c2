#!/usr/bin/env bash
# Session 81, call 3 (one GPU): nested windows with the caller's step at
# each fork enqueued before the weight gradients forked there (.carry/x3,
# GNNC_X_ORDER=1; 0: forked first, as in call 2) against the committed
# tree (.carry/final): references, replayed steps, timeline, gine.py.
set -u
S0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/final/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in final x3; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-x3; cp -r python/gnnc /tmp/pkg-x3/; xz -dc .carry/x3/so.xz > /tmp/pkg-x3/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
G=".carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda"
t check
for cfg in "1 256" "1 128"; do
  set -- $cfg
  GNNC_X_ORDER=$1 GNNC_X_CHUNKS=$2 timeout 60 /tmp/run-x3 $G --reps=3 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('x3 $cfg GINE match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
  for e in gin gat sage_mean; do
    GNNC_X_ORDER=$1 GNNC_X_CHUNKS=$2 timeout 60 /tmp/run-x3 examples/$e.mlir --graph=$D/pubmed --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('x3 $cfg $e pubmed match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
  done
done
t ab
one() { # label, env..., then gnn-run args
  local label=$1; shift
  env "$@" > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$label', 'fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -2 /tmp/j >> $R/steps.txt
}
for round in 1 2 3; do
  for cfg in "final 0 256" "x3 0 256" "x3 1 256" "x3 0 128" "x3 1 128"; do
    set -- $cfg
    one "r$round $cfg gine4096" GNNC_X_ORDER=$2 GNNC_X_CHUNKS=$3 timeout 60 /tmp/run-$1 $G --reps=50 --warmup=5 --no-check
    [ $round = 3 ] && continue
    for e in gin gcn gat sage_mean; do
      for g in pubmed blogcatalog; do
        one "r$round $cfg $e-$g" GNNC_X_ORDER=$2 GNNC_X_CHUNKS=$3 timeout 60 /tmp/run-$1 examples/$e.mlir --graph=$D/$g --grad --backend=cuda --reps=30 --warmup=3 --no-check
      done
    done
  done
done
t timeline
for cfg in "1 256" "1 128"; do
  set -- $cfg
  GNNC_X_ORDER=$1 GNNC_X_CHUNKS=$2 PYTHONPATH=/tmp/pkg-x3 timeout 90 python3 bench/probes/host/gine_layer_timeline.py "$D/qm9" --batch 4096 --side gnnc > $R/timeline-x3-$1-$2.txt 2>&1
done
t gine
for cfg in "final 0 256" "x3 1 256" "x3 1 128" "final 0 256" "x3 1 256" "x3 1 128" "final 0 256" "x3 1 256" "x3 1 128"; do
  set -- $cfg
  [ $(left) -lt 30 ] && break
  p=/tmp/pkg; [ $1 = x3 ] && p=/tmp/pkg-x3
  echo "== $cfg layer-only 4096" >> $R/gine.txt
  GNNC_X_ORDER=$2 GNNC_X_CHUNKS=$3 PYTHONPATH=$p timeout 60 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -3 | head -2 >> $R/gine.txt
done
t end
cat $R/steps.txt $R/gine.txt
