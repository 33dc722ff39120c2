#!/usr/bin/env bash
# Session 80, call 3 (one GPU): the tree as committed (.carry/final =
# 240fe42: the block reduction's in-warp rounds, row sums unrolled by 4,
# gather edge maps by 16-byte runs; no narrow-k gemm, no window reorder)
# against 5237f80 (.carry/old).
set -u
S0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/old/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in old final; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-final; cp -r python/gnnc /tmp/pkg-final/; xz -dc .carry/final/so.xz > /tmp/pkg-final/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
pkg() { [ $1 = old ] && echo /tmp/pkg || echo /tmp/pkg-final; }
G=".carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda"
t steps
timeout 60 /tmp/run-final $G --reps=3 --warmup=1 > /tmp/j 2>/tmp/j.err
python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('final GINE match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
for e in gin gat; do
  for v in old final; do timeout 60 /tmp/run-$v examples/$e.mlir --graph=$D/cora --grad --backend=cuda --reps=1 --warmup=0 --no-check > /tmp/res-$v.json 2>&1; done
  python3 -c "
import json
a, b = (json.load(open(f'/tmp/res-{v}.json')) for v in ('old', 'final'))
print('bits $e cora: outputs, gradients summaries equal:', a['outputs'] == b['outputs'], a['gradients'] == b['gradients'])" >> $R/steps.txt 2>&1
done
for v in old final old final; do
  timeout 60 /tmp/run-$v $G --reps=50 --warmup=5 --no-check > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v GINE replayed fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1
  timeout 60 /tmp/run-$v examples/gin.mlir --graph=$D/pubmed --grad --backend=cuda --reps=50 --warmup=5 --no-check > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gin pubmed replayed fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1
done
t timeline
PYTHONPATH=/tmp/pkg-final timeout 90 python3 bench/probes/host/gine_layer_timeline.py "$D/qm9" --batch 4096 --side gnnc > $R/timeline.txt 2>&1
t gine
for v in old final old final old final; do
  echo "== $v layer-only 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 60 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -3 >> $R/gine.txt
done
for v in old final old final; do
  echo "== $v model 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 60 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -3 >> $R/gine.txt
done
for b in 256 16384; do
  for m in --layer-only ""; do
    echo "== final $b ${m:-model}" >> $R/gine.txt
    PYTHONPATH=$(pkg final) timeout 60 python3 bench/gine.py "$D/qm9" --batch $b $m 2>&1 | tail -3 >> $R/gine.txt
  done
done
t gtest
xz -dc .carry/final/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 100 /tmp/rt 2>&1 | grep -E "PASSED|FAILED|tests ran" >> $R/tests.txt
t pytest
if [ $(left) -gt 80 ]; then
  (cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-final timeout $(( $(left) - 10 )) python3 -m pytest -q -x -p no:cacheprovider test_nn_cuda.py 2>&1 | tail -2 >> $R/tests.txt)
fi
t end
cat $R/steps.txt $R/gine.txt $R/tests.txt
