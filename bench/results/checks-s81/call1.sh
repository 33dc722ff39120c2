#!/usr/bin/env bash
# Session 81, call 1 (one GPU): GINE's replayed backward with the weight
# gradients' side stream at a lower priority than the chain (the capture
# stream at the device's greatest priority, the graph instantiated with
# per-node priorities) and with fewer row-split slices; an experiment
# build (.carry/x1, env knobs GNNC_X_PRIO and GNNC_X_CHUNKS, not
# committed) against the committed tree (.carry/final).
set -u
S0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/final/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in final x1; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
G=".carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda"
t check
for cfg in "x1 0 256" "x1 1 256" "x1 1 128" "x1 0 128" "x1 1 64"; do
  set -- $cfg
  GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 timeout 60 /tmp/run-$1 $G --reps=3 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$cfg GINE match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
done
t ab
one() { # label, env..., then gnn-run args
  local label=$1; shift
  env "$@" > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$label', 'fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -2 /tmp/j >> $R/steps.txt
}
for round in 1 2; do
  for cfg in "final 0 256" "x1 0 256" "x1 1 256" "x1 0 128" "x1 1 128" "x1 1 64" "serial 0 256"; do
    set -- $cfg
    bin=/tmp/run-$1; cc=1; [ $1 = serial ] && { bin=/tmp/run-final; cc=0; }
    one "r$round $cfg gine4096" GNNC_CONCURRENT_LAUNCHES=$cc GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 timeout 60 $bin $G --reps=50 --warmup=5 --no-check
    for e in gin gcn sage_mean; do
      for g in pubmed blogcatalog; do
        one "r$round $cfg $e-$g" GNNC_CONCURRENT_LAUNCHES=$cc GNNC_X_PRIO=$2 GNNC_X_CHUNKS=$3 timeout 60 $bin examples/$e.mlir --graph=$D/$g --grad --backend=cuda --reps=30 --warmup=3 --no-check
      done
    done
  done
done
t nsys
if command -v nsys > /dev/null && [ $(left) -gt 120 ]; then
  for cfg in "0 256" "1 128"; do
    set -- $cfg
    GNNC_X_PRIO=$1 GNNC_X_CHUNKS=$2 timeout 90 nsys profile -q --cuda-graph-trace=node -o /tmp/p$1 -f true /tmp/run-x1 $G --reps=5 --warmup=2 --no-check > /dev/null 2>&1
    nsys stats -q --report cuda_gpu_trace --format csv /tmp/p$1.nsys-rep 2>/dev/null | tail -40 > $R/trace-prio$1-chunks$2.csv
  done
else
  echo "no nsys or no time" >> $R/steps.txt
fi
t end
cat $R/steps.txt
