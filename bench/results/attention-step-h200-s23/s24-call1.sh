#!/usr/bin/env bash
# Session 24 call 1: (1) where a layer call's host time goes on the GPU
# machine (bench/probes/hostsplit/split.py, HEAD module); (2) the leaky ReLU
# as fmaxf (E) against HEAD (A): gatv2 on four graphs, fwd and fwd+bwd, f32
# and bf16, and reddit-like forward f32/bf16 for both.
set -u
for v in gr-A gr-E; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G
t dumps
( python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy > $R/log.txt 2>&1
  for g in pubmed musae-github blogcatalog arxiv-like; do python3 $P/dump_graph.py $g $D $G/$g.npy; done >> $R/log.txt 2>&1 ) &
jd=$!
t split
timeout 240 python3 bench/probes/hostsplit/split.py --device cuda --profile gin,sage --torch-profile gin > $R/split.txt 2>&1
wait $jd
t checks
for g in pubmed musae-github; do for set in gnnc_ops gnnc_ops_bf16; do
  timeout 60 $B/bin/gr-E $P/$set/gatv2.mlir --graph=$G/$g.npy --backend=cuda --grad --reps=1 --warmup=0 > /tmp/c.json 2>>$R/log.txt
  python3 -c "import json,sys; c=json.load(open('/tmp/c.json'))['cuda']; print(json.dumps({'graph': '$g', 'set': '$set', 'match': c.get('match')}))" >> $R/checks.jsonl 2>>$R/log.txt
done; done
ab() { # BIN SET GRAPH FLAGS
  timeout 90 $B/bin/$1 $P/$2/gatv2.mlir --graph=$G/$3.npy --backend=cuda $4 --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 - /tmp/a.json $1 $2 $3 "$4" >> $R/ab.jsonl <<'PY'
import json, sys
f, b, s, g, flags = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"bin": b, "set": s, "graph": g, "op": "gatv2", "flags": flags, "ms": c.get("fwdbwd_median_ms") if flags else c.get("median_ms")}))
except Exception as e:
    print(json.dumps({"bin": b, "set": s, "graph": g, "flags": flags, "error": repr(e)}))
PY
}
t reddit
for r in 1 2; do for set in gnnc_ops_bf16 gnnc_ops; do for bin in gr-A gr-E; do ab $bin $set reddit-like ""; done; done; done
t ab
for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for f in "" "--grad"; do
  for bin in gr-A gr-E gr-A gr-E; do ab $bin $set $g "$f"; done
done; done; done
t done
