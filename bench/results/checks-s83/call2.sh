#!/usr/bin/env bash
# Session 83, call 2 (one GPU). Three builds: s82 (0307abd, the base),
# s83c (6b0f837: the narrow edge product expanded into the edge pass only
# where the function does not return it: GINE's @f, the no-grad forward;
# training as before), s83d (s83c plus the runtime's narrow GEMM kernel for
# f32 C = A op(B) (+ bias) with n, k <= 128 and m n k <= 2^28, instead of
# cuBLAS). The probe bench/probes/gemm/skinny.cu again (B staged along its
# stored rows now; call 1's output lost its first shapes). GINE's @f and
# training step replayed per build; GEMM-heavy examples' training steps
# s82 / s83d; GINE's and every example's steps against the reference
# (s83d); the runtime gtests (s83d); compute-sanitizer (s83d);
# bench/gine.py per build; the package's CUDA tests (s83d).
set -u
S0=$(date +%s)
left() { echo $(( 565 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/s82/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in s82 s83c s83d; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
for v in s83c s83d; do
  mkdir -p /tmp/pkg-$v; cp -r python/gnnc /tmp/pkg-$v/; xz -dc .carry/$v/so.xz > /tmp/pkg-$v/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
done
pkg() { [ $1 = s82 ] && echo /tmp/pkg || echo /tmp/pkg-$1; }
A=$R/all.txt
t skinny
timeout 100 .carry/skinny > $R/skinny.txt 2>&1; echo "rc $?" >> $R/skinny.txt
t steps
G="--graph=.carry/qm9b4096 --backend=cuda"
for v in s82 s83c s83d s82 s83c s83d; do
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine @f fwd', c['fwd']['median_ms'])" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --grad --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine training fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
done
for v in s82 s83c s83d; do
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --reps=20 --warmup=5 --no-check --profile-steps > /tmp/p.json 2>&1
  python3 -c "
import json; t=open('/tmp/p.json').read(); c=json.loads(t[t.index('{'):])['cuda']['fwd']
print('$v @f profile', c['median_ms'], [(s['step'], round(s['median_ms']*1000, 1)) for s in c['steps']])" >> $A 2>&1
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --grad --reps=1 --warmup=0 --no-check > /tmp/s-$v.json 2>&1
  python3 -c "
import json; d=json.load(open('/tmp/s-$v.json')); c=d if 'outputs' in d else d['cuda']
print(json.dumps({'outputs': c.get('outputs'), 'gradients': c.get('gradients')}, sort_keys=True))" > /tmp/sum-$v.txt 2>&1
done
cmp -s /tmp/sum-s82.txt /tmp/sum-s83c.txt && echo "s82/s83c training summaries equal" >> $A || echo "s82/s83c training summaries DIFFER" >> $A
timeout 60 /tmp/run-s83d .carry/gine_nodiff.mlir $G --grad --reps=20 --warmup=5 --no-check --profile-steps > /tmp/p.json 2>&1
python3 -c "
import json; t=open('/tmp/p.json').read(); c=json.loads(t[t.index('{'):])['cuda']
for ph in ('fwd', 'bwd'): print('s83d training', ph, c[ph]['median_ms'], [(s['step'], round(s['median_ms']*1000, 1)) for s in c[ph]['steps']])" >> $A 2>&1
for e in gcn gin sage_mean gat; do
  for v in s82 s83d s82 s83d; do
    timeout 60 /tmp/run-$v examples/$e.mlir --graph=$D/pubmed --grad --backend=cuda --reps=30 --warmup=5 --no-check > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v $e pubmed fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
  done
done
t refs
for f in gine_nodiff gine_layer; do
  for g in .carry/qm9b4096 $D/cora $D/pubmed; do
    for mode in "" "--grad"; do
      timeout 60 /tmp/run-s83d .carry/$f.mlir --graph=$g $mode --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
      python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('ref $f $(basename $g) ${mode:-fwd} match', c.get('match'))" >> $A 2>&1 || { echo "$f $g $mode failed"; tail -3 /tmp/j.err; } >> $A
    done
  done
done
for e in gcn gcn3 gin gat gatv2 agnn transformer sage_mean sage_max; do
  timeout 60 /tmp/run-s83d examples/$e.mlir --graph=$D/pubmed --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('ref $e pubmed grad match', c.get('match'))" >> $A 2>&1 || { echo "$e failed"; tail -3 /tmp/j.err; } >> $A
done
echo "refs matched: $(grep -c 'match True' $A) of 21" >> $A
t gtest
xz -dc .carry/s83d/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 100 /tmp/rt > /tmp/rt.txt 2>&1; echo "gtest rc $?" >> $A
grep -E "PASSED|FAILED|tests ran" /tmp/rt.txt >> $A
t san
for f in gine_nodiff:cora:fwd gine_nodiff:cora:--grad gcn:pubmed:--grad; do
  IFS=: read m g mode <<< "$f"; [ "$mode" = fwd ] && mode=""
  src=.carry/$m.mlir; [ -f $src ] || src=examples/$m.mlir
  for tool in memcheck racecheck; do
    [ $(left) -lt 150 ] && break
    rm -f /tmp/san.log
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 --log-file /tmp/san.log \
      /tmp/run-s83d $src --graph=$D/$g $mode --backend=cuda --reps=2 --warmup=1 > /tmp/o.json 2> /tmp/o.err
    rc=$?
    mm=$(python3 -c "import json; print(json.load(open('/tmp/o.json'))['cuda'].get('match'))" 2>/dev/null)
    echo "$tool $m $g ${mode:-fwd}: rc $rc match $mm; $(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $A
  done
done
t gine
for v in s82 s83c s83d s82 s83d; do
  [ $(left) -lt 120 ] && break
  echo "== $v layer-only 4096" >> $A
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -4 | head -3 >> $A
done
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-s83d timeout $(( $(left) - 5 )) python3 -m pytest -q -x -p no:cacheprovider test_nn_cuda.py 2>&1 | tail -2 >> $A)
t end
cat $A; grep -E "35970|8984" $R/skinny.txt
