#!/usr/bin/env bash
# Call 6: A/B of the backward-fusion commit (36a3900) in one run, A = the
# session's start (0ec8cd8, .carry/base), B = 36a3900 (.carry/py312, bin).
# (1) gnn-run --grad on examples gcn, gcn3, gin, agnn: forward+backward and
#     backward medians, pubmed and musae-github, A B A B;
# (2) bench/nn_layers.py forward+backward of GCNConv, GINConv, SAGEConv mean
#     on pubmed and musae-github, 64 channels, default backward, A B A B.
# Outputs: grad.txt, layers-{A,B}{1,2}.txt.
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc $B/base/gnn-run.xz > /tmp/gnn-run-A; xz -dc $B/bin/gnn-run.xz > /tmp/gnn-run-B; chmod +x /tmp/gnn-run-*
mkdir -p /tmp/pkgA /tmp/pkgB; cp -r python/gnnc /tmp/pkgA/; cp -r python/gnnc /tmp/pkgB/
xz -dc $B/base/_gnnc.so.xz > /tmp/pkgA/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
cp $B/py312/_gnnc*.so /tmp/pkgB/gnnc/
t grad
for r in 1 2; do for s in A B; do for g in pubmed musae-github; do for e in gcn gcn3 gin agnn; do
  GNNC_CACHE_DIR=/tmp/kc-$s timeout 60 /tmp/gnn-run-$s examples/$e.mlir --graph=$D/$g --backend=cuda --grad --no-check --reps=30 --warmup=5 > /tmp/o.json 2>/dev/null
  python3 -c "import json,sys; c=json.load(open('/tmp/o.json'))['cuda']; print('$r $s $g $e', 'fwdbwd %.4f bwd %.4f bwd_kernels' % (c['fwdbwd_median_ms'], c['bwd']['median_ms']), c['bwd']['kernels'])" >> $R/grad.txt 2>&1
done; done; done; done
t layers
for r in 1 2; do for s in A B; do
  mkdir -p -m 700 /tmp/kc-$s
  PYTHONPATH=/tmp/pkg$s GNNC_CACHE_DIR=/tmp/kc-$s timeout 100 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github --channels 64 --layers gcn gin sage_mean --parts speed --reps 20 > $R/layers-$s$r.txt 2>&1
done; done
t done
