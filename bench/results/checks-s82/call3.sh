#!/usr/bin/env bash
# Session 82, call 3 (one GPU), the committed build (.carry/new): GINE's
# forward with its edge projection as an elementwise map
# (gine_unrolled.py's function, .carry/gine_unrolled.mlir: the forward fuses
# it into the edge pass, no [E, 64] temporary) against the function as the
# layer builds it, checked against the reference; then the bf16 op
# scoreboard (peers in bf16 and fp32, gnnc bf16 forward checked against the
# reference on the four small graphs, gnnc bf16 --grad).
set -u
S0=$(date +%s)
left() { echo $(( 150 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/new/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc .carry/new/gnn-run.xz > /tmp/run-new; chmod +x /tmp/run-new
source bench/gpu_setup.sh .carry "$OUT"
t gine-fwd
G="--graph=.carry/qm9b4096 --backend=cuda"
for f in gine_layer gine_unrolled; do
  timeout 60 /tmp/run-new .carry/$f.mlir $G --reps=3 --warmup=1 > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$f match', c.get('match'))" >> $R/gine.txt 2>&1 || tail -3 /tmp/j.err >> $R/gine.txt
done
for f in gine_layer gine_unrolled gine_layer gine_unrolled; do
  timeout 60 /tmp/run-new .carry/$f.mlir $G --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$f fwd', c['median_ms'], 'peak MiB', c.get('peak_device_bytes', 0) / 2**20)" >> $R/gine.txt 2>&1 || tail -3 /tmp/j.err >> $R/gine.txt
done
for f in gine_layer gine_unrolled; do
  timeout 60 /tmp/run-new .carry/$f.mlir $G --reps=20 --warmup=5 --no-check --profile-steps > /tmp/j 2>&1
  python3 -c "
import json; c=json.load(open('/tmp/j'))['cuda']
print('$f steps (us, each alone):', ', '.join(f\"{s['step']} {s['median_ms']*1000:.1f}\" for s in c.get('step_ms', [])))" >> $R/gine.txt 2>&1
done
P=.carry/peers; G2=/tmp/graphs; W=$R/w; mkdir -p $G2 $W
t dump
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G2/$g.npy; done > $W/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $W/log.txt 2>&1
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
t peers
timeout 60 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype bfloat16 --datasets $D > $W/peers-bf16.jsonl 2>> $W/log.txt
timeout 60 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype float32 --datasets $D > $W/peers-fp32.jsonl 2>> $W/log.txt
small="$G2/pubmed.npy $G2/musae-github.npy $G2/blogcatalog.npy $G2/qm9-batch4096.npy"
t fwd
[ $(left) -gt 40 ] && DTYPE=bfloat16 timeout 40 bash $P/gnnc_ops.sh /tmp/run-new $small > $W/gnnc-fwd-bf16.jsonl 2>> $W/log.txt
DTYPE=bfloat16 GNNC_OPS_FLAGS="--no-check" timeout 20 bash $P/gnnc_ops.sh /tmp/run-new $G2/arxiv-like.npy >> $W/gnnc-fwd-bf16.jsonl 2>> $W/log.txt
echo "## bf16 forward (gnnc bf16 / each peer's faster precision)" >> $R/tables.md
python3 $P/side_by_side.py $W/gnnc-fwd-bf16.jsonl $W/peers-bf16.jsonl $W/peers-fp32.jsonl >> $R/tables.md 2>&1
t grad
[ $(left) -gt 45 ] && DTYPE=bfloat16 GNNC_OPS_FLAGS="--grad --no-check" timeout 40 bash $P/gnnc_ops.sh /tmp/run-new $small $G2/arxiv-like.npy > $W/gnnc-grad-bf16.jsonl 2>> $W/log.txt
echo "## bf16 forward+backward (gnnc bf16 / each peer's faster precision)" >> $R/tables.md
python3 $P/side_by_side.py $W/gnnc-grad-bf16.jsonl $W/peers-bf16.jsonl $W/peers-fp32.jsonl >> $R/tables.md 2>&1
t end
cat $R/gine.txt $R/tables.md
