#!/usr/bin/env bash
# Session 82, call 1 (one GPU): the narrow weight gradient with its narrow
# rows staged in shared memory (.carry/new) against HEAD 45aaf5b
# (.carry/base): the kernel probe bench/probes/atb/narrow2.cu (built here,
# carried as .carry/narrow2), the runtime gtests, GINE's replayed step both
# builds (times, per-step profile, the output and gradient summaries'
# bits), every example's training step against the reference (new; GINE
# too; the 100K-node graph's 196-slice gradients), compute-sanitizer on
# GINE, the package's CUDA tests, and bench/gine.py both builds.
set -u
S0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/base/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in base new; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-new; cp -r python/gnnc /tmp/pkg-new/; xz -dc .carry/new/so.xz > /tmp/pkg-new/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
pkg() { [ $1 = base ] && echo /tmp/pkg || echo /tmp/pkg-new; }
t probe
timeout 90 .carry/narrow2 > $R/narrow2.txt 2>&1; echo "rc $?" >> $R/narrow2.txt
t gtest
xz -dc .carry/new/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 120 /tmp/rt > /tmp/rt.txt 2>&1; echo "rc $?" >> $R/tests.txt
grep -E "PASSED|FAILED|tests ran|RowSplit" /tmp/rt.txt >> $R/tests.txt
t gine-steps
G="--graph=.carry/qm9b4096 --grad --backend=cuda"
for v in base new base new; do
  timeout 60 /tmp/run-$v .carry/gine_layer.mlir $G --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
done
for v in base new; do
  timeout 60 /tmp/run-$v .carry/gine_layer.mlir $G --reps=20 --warmup=5 --no-check --profile-steps > $R/profile-$v.json 2>&1
  # The summaries (outputs and gradients) of one run each: equal bits expected.
  timeout 60 /tmp/run-$v .carry/gine_layer.mlir $G --reps=1 --warmup=0 --no-check > /tmp/s-$v.json 2>&1
  python3 -c "
import json; d=json.load(open('/tmp/s-$v.json')); c=d if 'outputs' in d else d['cuda']
print(json.dumps({'outputs': c.get('outputs'), 'gradients': c.get('gradients')}, sort_keys=True))" > $R/summary-$v.txt 2>&1
done
cmp -s $R/summary-base.txt $R/summary-new.txt && echo "gine summaries equal" >> $R/steps.txt || echo "gine summaries DIFFER" >> $R/steps.txt
t refs
for e in gcn gcn3 gin gat gatv2 agnn transformer sage_mean sage_max; do
  for g in pubmed cora; do
    timeout 60 /tmp/run-new examples/$e.mlir --graph=$D/$g --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$e $g match', c.get('match'))" >> $R/refs.txt 2>&1 || { echo "$e $g failed"; tail -3 /tmp/j.err; } >> $R/refs.txt
  done
done
for poison in 0 1; do
  GNNC_POISON_WORKSPACE=$poison timeout 60 /tmp/run-new .carry/gine_layer.mlir $G --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('poison $poison gine qm9b4096 match', c.get('match'))" >> $R/refs.txt 2>&1 || tail -3 /tmp/j.err >> $R/refs.txt
done
for e in gcn sage_mean; do
  timeout 120 /tmp/run-new examples/$e.mlir --graph=powerlaw:nodes=100000,edges=1000000,seed=3 --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$e powerlaw 100K/1M match', c.get('match'))" >> $R/refs.txt 2>&1 || { echo "$e 100K failed"; tail -3 /tmp/j.err; } >> $R/refs.txt
done
grep -c "match True" $R/refs.txt >> $R/refs.txt
t san
for tool in memcheck racecheck; do
  rm -f /tmp/san.log
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 --log-file /tmp/san.log \
    /tmp/run-new .carry/gine_layer.mlir --graph=$D/cora --grad --backend=cuda --reps=2 --warmup=1 > /tmp/o.json 2> /tmp/o.err
  rc=$?
  m=$(python3 -c "import json; print(json.load(open('/tmp/o.json'))['cuda'].get('match'))" 2>/dev/null)
  echo "$tool gine cora: rc $rc match $m; $(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $R/san.txt
done
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-new timeout 150 python3 -m pytest -q -x -p no:cacheprovider test_nn_cuda.py 2>&1 | tail -2 >> $R/tests.txt)
t gine
for v in base new base new base new; do
  [ $(left) -lt 60 ] && break
  echo "== $v layer-only 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -3 | head -2 >> $R/gine.txt
done
for v in base new base new; do
  [ $(left) -lt 40 ] && break
  echo "== $v model 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -3 | head -2 >> $R/gine.txt
done
t end
cat $R/steps.txt $R/tests.txt $R/san.txt $R/gine.txt; tail -1 $R/refs.txt; grep -v "match True" $R/refs.txt | head; grep -E "GINE|2M" $R/narrow2.txt | head -40
