#!/usr/bin/env bash
# Session 83, call 4 (one GPU): the final tree (001e018, .carry/s83f: the
# narrow edge product in @f's edge pass, op handles that name the fake
# kernels' signatures) against s82 (0307abd): the package's CUDA tests and
# test_core on CUDA, the runtime gtests, GINE's @f and training step against
# the reference, and bench/gine.py (one layer and the model) alternating.
set -u
S0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/s82/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in s82 s83f; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-s83f; cp -r python/gnnc /tmp/pkg-s83f/; xz -dc .carry/s83f/so.xz > /tmp/pkg-s83f/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
# s82's package is its own Python (0307abd's _core.py: the handles before).
# (carried as .carry/s82/_core.py)
mkdir -p /tmp/pkg-s82; cp -r python/gnnc /tmp/pkg-s82/; cp .carry/s82/_core.py /tmp/pkg-s82/gnnc/_core.py; cp .carry/py312/_gnnc*.so /tmp/pkg-s82/gnnc/
pkg() { echo /tmp/pkg-$1; }
A=$R/all.txt
t gtest
xz -dc .carry/s83f/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 100 /tmp/rt > /tmp/rt.txt 2>&1; echo "gtest rc $?" >> $A
grep -E "PASSED|FAILED|tests ran" /tmp/rt.txt >> $A
t refs
for f in gine_nodiff gine_layer; do
  for g in .carry/qm9b4096 $D/cora; do
    for mode in "" "--grad"; do
      timeout 60 /tmp/run-s83f .carry/$f.mlir --graph=$g $mode --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
      python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('ref $f $(basename $g) ${mode:-fwd} match', c.get('match'))" >> $A 2>&1 || { echo "$f $g $mode failed"; tail -3 /tmp/j.err; } >> $A
    done
  done
done
echo "refs matched: $(grep -c 'match True' $A) of 8" >> $A
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-s83f timeout 200 python3 -m pytest -q -x -p no:cacheprovider test_nn_cuda.py 2>&1 | tail -1 | sed 's/^/test_nn_cuda: /' >> $A)
(cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-s83f timeout 120 python3 -m pytest -q -x -p no:cacheprovider test_core.py -k "cuda or compile or handles" 2>&1 | tail -1 | sed 's/^/test_core cuda-compile-handles: /' >> $A)
t gine
for v in s82 s83f s82 s83f s82 s83f; do
  [ $(left) -lt 60 ] && break
  echo "== $v layer-only 4096" >> $A
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -4 | head -3 >> $A
  [ $(left) -lt 60 ] && break
  echo "== $v model 4096" >> $A
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -4 | head -3 >> $A
done
t end
cat $A
