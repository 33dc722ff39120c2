#!/usr/bin/env bash
# Session 81, call 2 (one GPU): weight gradients on the second stream for
# the whole backward (nested windows, joined at the end; .carry/x2, with
# call 1's env knobs GNNC_X_PRIO and GNNC_X_CHUNKS) against the committed
# tree (.carry/final): references, replayed steps, timelines, gine.py.
set -u
S0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/final/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in final x2; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-x2; cp -r python/gnnc /tmp/pkg-x2/; xz -dc .carry/x2/so.xz > /tmp/pkg-x2/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
G=".carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda"
t check
for cfg in "x2 0 256 1" "x2 1 128 1" "x2 0 128 0"; do
  set -- $cfg
  GNNC_CONCURRENT_LAUNCHES=$4 GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 timeout 60 /tmp/run-$1 $G --reps=3 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$cfg GINE match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
  for e in gin gat gcn sage_mean; do
    GNNC_CONCURRENT_LAUNCHES=$4 GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 timeout 60 /tmp/run-$1 examples/$e.mlir --graph=$D/pubmed --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$cfg $e pubmed match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
  done
done
t ab
one() { # label, env..., then gnn-run args
  local label=$1; shift
  env "$@" > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$label', 'fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -2 /tmp/j >> $R/steps.txt
}
for round in 1 2 3; do
  for cfg in "final 0 256" "x2 0 256" "x2 1 256" "x2 0 128" "x2 1 128"; do
    set -- $cfg
    one "r$round $cfg gine4096" GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 timeout 60 /tmp/run-$1 $G --reps=50 --warmup=5 --no-check
    [ $round = 3 ] && continue
    for e in gin gcn gat sage_mean; do
      for g in pubmed blogcatalog; do
        one "r$round $cfg $e-$g" GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 timeout 60 /tmp/run-$1 examples/$e.mlir --graph=$D/$g --grad --backend=cuda --reps=30 --warmup=3 --no-check
      done
    done
  done
done
t timeline
for cfg in "0 256" "1 128"; do
  set -- $cfg
  GNNC_X_PRIO=$1 GNNC_X_CHUNKS=$2 PYTHONPATH=/tmp/pkg-x2 timeout 90 python3 bench/probes/host/gine_layer_timeline.py "$D/qm9" --batch 4096 --side gnnc > $R/timeline-x2-$1-$2.txt 2>&1
done
t gine
for cfg in "final 0 256" "x2 0 256" "x2 1 128" "final 0 256" "x2 0 256" "x2 1 128"; do
  set -- $cfg
  [ $(left) -lt 40 ] && break
  p=/tmp/pkg; [ $1 = x2 ] && p=/tmp/pkg-x2
  echo "== $cfg layer-only 4096" >> $R/gine.txt
  GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 PYTHONPATH=$p timeout 60 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -3 >> $R/gine.txt
done
t end
cat $R/steps.txt $R/gine.txt
