#!/usr/bin/env bash
# Session 76, call 3 (one GPU; not run: no device time was left): the
# op-level effect of running weight gradients beside the input gradient's
# steps, without the host in the way: gnn-run --grad on the GINE layer's
# function (hidden 64, edge_dim 4, the QM9 batch of bench/gine.py as a
# graph folder: three alternations) and on the GIN and GCN examples on
# pubmed (one), each with the windows on two streams and with
# GNNC_CONCURRENT_LAUNCHES=0 (the same Programs in order); every run also
# checks its outputs and gradients against the reference evaluator. Then
# bench/probes/host/gine_layer_calls.py (each GINE layer call's host time
# by its place in the model). Outputs straight under $OUT/o. Carried:
# .carry/datasets and .carry/s76 with this tree's module (new.so.xz) and
# build/bin/gnn-run (gnn-run.xz), xz-compressed.
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
S=.carry/s76; xz -dc $S/gnn-run.xz > /tmp/gnn-run; chmod +x /tmp/gnn-run
# GINE's layer function (gnnc.nn's gine_layer template: hidden 64, MLP of
# two Linears with a ReLU, edge_dim 4 with bias) and bench/gine.py's QM9
# batch as a graph folder, made here from the carried module and data.
S=/tmp/s76; mkdir -p $S/qm9b4096
python3 - "$D/qm9" $S <<'PY'
import gzip, pathlib, sys
import torch
sys.path.insert(0, "bench")
import molecules
from gnnc.nn import _ir
out = pathlib.Path(sys.argv[2])
m, _ = _ir.gine_layer(64, ((64, True, True), (64, True, False)), "f32", (4, True))
(out / "gine_layer.mlir").write_text(m.text(names=True))
x, ei, _ = molecules.QM9(pathlib.Path(sys.argv[1])).batch(0, 4096, 16, torch.device("cpu"))
g = out / "qm9b4096"
(g / "meta.txt").write_text(f"nodes {x.size(0)}\nedges {ei.size(1)}\ndirected 1\n")
with gzip.open(g / "edges.txt.gz", "wt") as f:
    f.writelines(f"{s} {d}\n" for s, d in ei.t().tolist())
PY
O="$R/o"; mkdir -p $O  # (under $OUT: what ran comes back even past the limit)
summ() {  # file: match, fwd and bwd median ms
  python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cuda']; print(sys.argv[1].split('/')[-1], c.get('match'), c['fwd'].get('median_ms'), c['bwd'].get('median_ms'), c.get('fwdbwd_median_ms'))" "$1" 2>&1 | tail -1
}
t gine
for i in 1 2 3; do
  for mode in 1 0; do
    GNNC_CONCURRENT_LAUNCHES=$mode timeout 60 /tmp/gnn-run $S/gine_layer.mlir --graph=$S/qm9b4096 \
      --grad --backend=cuda --reps=300 --warmup=30 > $O/gine-c$mode-$i.json 2> $O/gine-c$mode-$i.err
  done
done
t examples
for e in gin gcn; do
  for i in 1; do
    for mode in 1 0; do
      GNNC_CONCURRENT_LAUNCHES=$mode timeout 60 /tmp/gnn-run examples/$e.mlir --graph=$D/pubmed \
        --grad --backend=cuda --reps=200 --warmup=20 > $O/$e-c$mode-$i.json 2> $O/$e-c$mode-$i.err
    done
  done
done
t calls
timeout 45 python3 bench/probes/host/gine_layer_calls.py "$D/qm9" > $O/layer-calls.txt 2>&1
t done
for f in $O/*.json; do summ $f; done
cat $O/layer-calls.txt
cat $R/progress.txt
