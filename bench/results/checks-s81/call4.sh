#!/usr/bin/env bash
# Session 81, call 4 (one GPU): the tree as committed (.carry/new =
# 1a032b3: weight gradients beside the rest of the backward, about 128
# row-split blocks) against 3dde4bb (.carry/final): runtime gtests, every
# example's training step against the reference (also with the workspace
# poisoned), compute-sanitizer, the CUDA tests of the package, GINE through
# bench/gine.py, and a 1M-node graph's training steps.
set -u
S0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/final/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in final new; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-new; cp -r python/gnnc /tmp/pkg-new/; xz -dc .carry/new/so.xz > /tmp/pkg-new/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
pkg() { [ $1 = final ] && echo /tmp/pkg || echo /tmp/pkg-new; }
t gtest
xz -dc .carry/new/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 120 /tmp/rt > /tmp/rt.txt 2>&1; echo "rc $?" >> $R/tests.txt
grep -E "PASSED|FAILED|tests ran|Nested|BesideALaunch" /tmp/rt.txt >> $R/tests.txt
t refs
for poison in 0 1; do
  for e in gcn gcn3 gin gat gatv2 agnn transformer sage_mean sage_max; do
    for g in pubmed cora; do
      GNNC_POISON_WORKSPACE=$poison timeout 60 /tmp/run-new examples/$e.mlir --graph=$D/$g --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
      python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('poison $poison $e $g match', c.get('match'))" >> $R/refs.txt 2>&1 || { echo "poison $poison $e $g failed"; tail -3 /tmp/j.err; } >> $R/refs.txt
    done
  done
  GNNC_POISON_WORKSPACE=$poison timeout 60 /tmp/run-new .carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('poison $poison gine qm9b4096 match', c.get('match'))" >> $R/refs.txt 2>&1 || tail -3 /tmp/j.err >> $R/refs.txt
done
grep -c "match True" $R/refs.txt >> $R/refs.txt
t san
for c in "memcheck .carry/gine_layer.mlir" "racecheck .carry/gine_layer.mlir" \
         "memcheck examples/gcn3.mlir" "memcheck examples/gat.mlir"; do
  set -- $c
  rm -f /tmp/san.log
  timeout 60 compute-sanitizer --tool $1 --error-exitcode 9 --log-file /tmp/san.log \
    /tmp/run-new $2 --graph=$D/cora --grad --backend=cuda --reps=2 --warmup=1 > /tmp/o.json 2> /tmp/o.err
  rc=$?
  m=$(python3 -c "import json; print(json.load(open('/tmp/o.json'))['cuda'].get('match'))" 2>/dev/null)
  echo "$1 $2: rc $rc match $m; $(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $R/san.txt
  grep -h -E "Race reported|Invalid" /tmp/san.log | sort | uniq -c | head -5 >> $R/san.txt
done
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-new timeout 170 python3 -m pytest -q -x -p no:cacheprovider test_nn_cuda.py 2>&1 | tail -2 >> $R/tests.txt)
t gine
for v in final new final new final new; do
  [ $(left) -lt 100 ] && break
  echo "== $v layer-only 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -3 | head -2 >> $R/gine.txt
done
for v in final new final new; do
  [ $(left) -lt 70 ] && break
  echo "== $v model 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -3 | head -2 >> $R/gine.txt
done
t big
P="--graph=powerlaw:nodes=1000000,edges=10000000,seed=3 --grad --backend=cuda --reps=10 --warmup=2 --no-check"
for e in gcn gin sage_mean gat; do
  for v in final new final new; do
    [ $(left) -lt 20 ] && break
    timeout $(( $(left) - 5 )) /tmp/run-$v examples/$e.mlir $P > /tmp/j 2>&1
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v $e powerlaw 1M/10M fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/big.txt 2>&1 || tail -2 /tmp/j >> $R/big.txt
  done
done
t end
cat $R/tests.txt $R/san.txt $R/gine.txt $R/big.txt; tail -1 $R/refs.txt; grep -v "match True" $R/refs.txt | head
