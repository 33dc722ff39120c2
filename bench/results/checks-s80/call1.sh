#!/usr/bin/env bash
# Session 80, call 1 (one GPU). Builds carried (ignored, .carry/):
#   old = HEAD 5237f80 (code of 9db5028); new = old + commits 194a378 and
#   8b4a2f5 (a block reduction's in-warp rounds on shuffles) + session 79's
#   narrow-k-bias.patch (gemmBias with k <= 8 in its own kernel) + a block
#   row sum's strided loop unrolled by 4 (LowerFamilies.cpp blockRowSum) +
#   gather edge maps a thread per 16-byte run (lowerEdgeMap, Schedule.cpp).
# (a) GINE's training step against the reference (gnn-run, both builds);
#     the same bits where no gemm has k <= 8 (five examples on cora:
#     output and gradient summaries compared);
# (b) replayed and per-step device times of the GINE layer, alternating;
# (c) new: the runtime gtests, six examples against the reference on cora and
#     pubmed, gnnc.nn's CUDA tests;
# (d) torch.profiler timeline of one GINEConv layer fwd+bwd (old build);
# (e) bench/gine.py --layer-only and the model, old/new alternating.
set -u
S0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/old/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in old new; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-new; cp -r python/gnnc /tmp/pkg-new/; xz -dc .carry/new/so.xz > /tmp/pkg-new/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
pkg() { [ $1 = old ] && echo /tmp/pkg || echo /tmp/pkg-new; }
G=".carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda"
t steps
for v in old new; do
  timeout 60 /tmp/run-$v $G --reps=3 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v GINE match', c.get('match'))" >> $R/steps.txt 2>&1 || tail -3 /tmp/j.err >> $R/steps.txt
done
for e in gin gat gatv2 transformer sage_max; do
  for v in old new; do timeout 60 /tmp/run-$v examples/$e.mlir --graph=$D/cora --grad --backend=cuda --reps=1 --warmup=0 --no-check > /tmp/res-$v.json 2>&1; done
  python3 -c "
import json
a, b = (json.load(open(f'/tmp/res-{v}.json')) for v in ('old', 'new'))
print('bits $e cora: outputs, gradients summaries equal:', a['outputs'] == b['outputs'], a['gradients'] == b['gradients'])" >> $R/steps.txt 2>&1
done
for v in old new old new; do
  timeout 60 /tmp/run-$v $G --reps=50 --warmup=5 --no-check > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v replayed fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/steps.txt 2>&1
done
for v in old new; do
  timeout 60 /tmp/run-$v $G --reps=30 --warmup=5 --no-check --profile-steps > /tmp/j 2>&1
  python3 -c "
import json; c = json.load(open('/tmp/j'))['cuda']
for part in ('fwd', 'bwd'):
    print('$v', part, 'us per step', [round(s['median_ms'] * 1e3, 1) for s in c[part]['step_ms']])" >> $R/steps.txt 2>&1
done
t timeline
timeout 100 python3 bench/probes/host/gine_layer_timeline.py "$D/qm9" --batch 4096 > $R/timeline.txt 2>&1
t gine
for v in old new old new; do
  echo "== $v layer-only 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 60 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -4 >> $R/gine.txt
done
for v in old new; do
  echo "== $v model 4096" >> $R/gine.txt
  PYTHONPATH=$(pkg $v) timeout 60 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -4 >> $R/gine.txt
done
t gtest
xz -dc .carry/new/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 100 /tmp/rt 2>&1 | tail -6 >> $R/tests.txt
t autodiff
mkdir -p /tmp/ds; for g in cora pubmed; do ln -s "$D/$g" /tmp/ds/$g; done
EXAMPLES="gin gat gatv2 agnn transformer sage_max" timeout 150 bash bench/autodiff_all.sh /tmp/run-new /tmp/ds 8 2>&1 | tail -3 >> $R/tests.txt
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda PYTHONPATH=/tmp/pkg-new timeout $(( $(left) > 20 ? $(left) - 10 : 10 )) python3 -m pytest -q -x -p no:cacheprovider test_nn_cuda.py 2>&1 | tail -5 >> $R/tests.txt)
t end
cat $R/gine.txt $R/steps.txt $R/tests.txt
