#!/usr/bin/env bash
# Session 79, call 1 (one GPU) -- NOT RUN: no device machine could be
# started this session. What it checks (see README.md for how to rebuild
# "new"):
# (a) where a GINE layer's backward spends its device time: gnn-run's
#     per-step times of the layer's training step, torch.profiler's
#     timeline of one GINEConv layer's forward+backward through gnnc.nn
#     (bench/probes/host/gine_layer_timeline.py, both libraries);
# (b) a build with the block reduction's in-warp rounds on shuffles (commit
#     194a378, reverted in ee2f140) and gemmBias's narrow-k kernel
#     (narrow-k-bias.patch) -- "new" -- against session 76's build ("old"):
#     the GINE step against the reference, the same bits where no gemm has
#     k <= 8 (four examples' output and gradient summaries, %.17g sums,
#     compared), replayed and per-step times, the gemm gtests,
#     bench/gine.py --layer-only alternating old/new, four examples'
#     training steps against the reference on two graphs.
# Carried: .carry/datasets, .carry/s76 (old), .carry/s79 (new: new.so.xz,
# gnn-run.xz, GNNRuntimeTests.xz built from the tree described above).
set -u
mkdir -p .carry/py312; xz -dc .carry/s79/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc .carry/s76/gnn-run.xz > /tmp/run-old; xz -dc .carry/s79/gnn-run.xz > /tmp/run-new; chmod +x /tmp/run-old /tmp/run-new
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-old; cp -r python/gnnc /tmp/pkg-old/; xz -dc .carry/s76/new.so.xz > /tmp/pkg-old/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
G=".carry/s76/gine_layer.mlir --graph=.carry/s76/qm9b4096 --grad --backend=cuda"
t steps
for v in old new; do
  timeout 60 /tmp/run-$v $G --reps=3 --warmup=1 > /tmp/j 2>&1
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v GINE match', c.get('match'))" >> $R/steps.txt 2>&1
done
# The block reduction's bits where no gemm has k <= 8.
for e in gin gat agnn transformer; do
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
t gtest
xz -dc .carry/s79/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
timeout 60 /tmp/rt --gtest_filter='GpuLibrary.Gemm*' 2>&1 | tail -4 >> $R/tests.txt
t autodiff
mkdir -p /tmp/ds; for g in cora pubmed; do ln -s "$D/$g" /tmp/ds/$g; done
EXAMPLES="gin gat agnn transformer" timeout 120 bash bench/autodiff_all.sh /tmp/run-new /tmp/ds 15 >> $R/tests.txt 2>&1
t timeline
timeout 120 python3 bench/probes/host/gine_layer_timeline.py "$D/qm9" --batch 4096 > $R/timeline.txt 2>&1
t gine
for v in old new old new; do
  echo "== $v layer-only 4096" >> $R/gine.txt
  PYTHONPATH=$([ $v = old ] && echo /tmp/pkg-old || echo /tmp/pkg) timeout 100 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -4 >> $R/gine.txt
done
t end
cat $R/gine.txt $R/steps.txt; tail -8 $R/tests.txt
