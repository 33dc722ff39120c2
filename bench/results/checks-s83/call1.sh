#!/usr/bin/env bash
# Session 83, call 1 (one GPU). Three builds: s82 (0307abd, the session's
# base), s83a (GINE's edge projection computed as a map inside the edge
# passes and made again in the backward, 5466374), s83b (s83a plus the
# tall, narrow GEMM kernel in the runtime instead of cuBLAS, uncommitted
# then). First the probe bench/probes/gemm/skinny.cu (built here, carried
# as .carry/skinny): tall, narrow GEMMs, cuBLAS against that kernel's
# variants. Then GINE's replayed step per build (times, per-step profile),
# every example's and GINE's training step against the reference (s83b;
# GINE with and without edge_attr's gradient, the workspace poisoned and
# not), the runtime gtests (s83b), bench/gine.py per build rotating,
# compute-sanitizer (s83b), the package's CUDA tests (s83b).
set -u
S0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/s82/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in s82 s83a s83b; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
for v in s83a s83b; do
  mkdir -p /tmp/pkg-$v; cp -r python/gnnc /tmp/pkg-$v/; xz -dc .carry/$v/so.xz > /tmp/pkg-$v/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
done
pkg() { [ $1 = s82 ] && echo /tmp/pkg || echo /tmp/pkg-$1; }
t skinny
timeout 100 .carry/skinny > $R/skinny.txt 2>&1; echo "rc $?" >> $R/skinny.txt
t gine-steps
G="--graph=.carry/qm9b4096 --grad --backend=cuda"
for v in s82 s83a s83b s82 s83a s83b; do
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine_nodiff fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
done
for v in s82 s83b; do
  timeout 60 /tmp/run-$v .carry/gine_layer.mlir $G --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine_layer fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
  timeout 60 /tmp/run-$v examples/gcn.mlir --graph=$D/pubmed --grad --backend=cuda --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gcn pubmed fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
done
for v in s82 s83a s83b; do
  timeout 60 /tmp/run-$v .carry/gine_nodiff.mlir $G --reps=20 --warmup=5 --no-check --profile-steps > $R/profile-$v.json 2>&1
done
t refs
for f in gine_nodiff gine_layer; do
  for g in .carry/qm9b4096 $D/cora $D/pubmed; do
    for poison in 0 1; do
      GNNC_POISON_WORKSPACE=$poison timeout 60 /tmp/run-s83b .carry/$f.mlir --graph=$g --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
      python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$f $(basename $g) poison $poison match', c.get('match'))" >> $R/refs.txt 2>&1 || { echo "$f $g failed"; tail -3 /tmp/j.err; } >> $R/refs.txt
    done
  done
done
for e in gcn gcn3 gin gat gatv2 agnn transformer sage_mean sage_max; do
  for g in cora pubmed; do
    timeout 60 /tmp/run-s83b examples/$e.mlir --graph=$D/$g --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$e $g match', c.get('match'))" >> $R/refs.txt 2>&1 || { echo "$e $g failed"; tail -3 /tmp/j.err; } >> $R/refs.txt
  done
done
grep -c "match True" $R/refs.txt >> $R/refs.txt
t gtest
xz -dc .carry/s83b/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 100 /tmp/rt > /tmp/rt.txt 2>&1; echo "rc $?" >> $R/tests.txt
grep -E "PASSED|FAILED|tests ran" /tmp/rt.txt >> $R/tests.txt
t gine
for v in s82 s83a s83b s82 s83a s83b; do
  [ $(left) -lt 200 ] && break
  echo "== $v model 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -3 >> $R/gine.txt
done
t san
for f in gine_nodiff:cora gcn:pubmed; do
  for tool in memcheck racecheck; do
    rm -f /tmp/san.log
    m=${f%%:*}; g=${f##*:}; src=.carry/$m.mlir; [ -f $src ] || src=examples/$m.mlir
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 --log-file /tmp/san.log \
      /tmp/run-s83b $src --graph=$D/$g --grad --backend=cuda --reps=2 --warmup=1 > /tmp/o.json 2> /tmp/o.err
    rc=$?
    mm=$(python3 -c "import json; print(json.load(open('/tmp/o.json'))['cuda'].get('match'))" 2>/dev/null)
    echo "$tool $m $g: rc $rc match $mm; $(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $R/san.txt
  done
done
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-s83b timeout $(( $(left) - 10 )) python3 -m pytest -q -x -p no:cacheprovider test_nn_cuda.py 2>&1 | tail -2 >> $R/tests.txt)
t end
cat $R/skinny.txt $R/steps.txt $R/tests.txt $R/san.txt $R/gine.txt; tail -1 $R/refs.txt; grep -v "match True" $R/refs.txt | head
