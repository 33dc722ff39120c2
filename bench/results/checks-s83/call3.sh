#!/usr/bin/env bash
# Session 83, call 3 (one GPU): GINE's no-grad forward @f (gine_nodiff,
# QM9 batch of 4,096 molecules) replayed, s82 (0307abd) against s83c
# (6b0f837: the edge projection computed inside the aggregation there),
# alternating, whole and per step (call 2 read these runs' JSON under the
# training keys and lost them).
set -u
for v in s82 s83c; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
mkdir -p .carry/py312; xz -dc .carry/s82/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
A=$R/all.txt
G="--graph=.carry/qm9b4096 --backend=cuda"
for v in s82 s83c s82 s83c s82 s83c s82 s83c; do
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --reps=100 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine @f', c['median_ms'], 'min', c.get('min_ms'))" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
done
for v in s82 s83c; do
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --reps=30 --warmup=5 --no-check --profile-steps > /tmp/p.json 2>&1
  python3 -c "
import json; t=open('/tmp/p.json').read(); c=json.loads(t[t.index('{'):])['cuda']
print('$v @f profile', c['median_ms'], [(s['step'], round(s['median_ms']*1000, 1)) for s in c['step_ms']])" >> $A 2>&1
  for g in cora pubmed; do
    timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir --graph=$D/$g --backend=cuda --reps=50 --warmup=5 --no-check > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine @f $g', c['median_ms'])" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
  done
done
cat $A
