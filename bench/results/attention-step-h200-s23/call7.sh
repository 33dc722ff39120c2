#!/usr/bin/env bash
# Session 23 call 7: the final code D (leaky ReLU as one maximum, without the
# lazy rescale of call 6). Checks with D in parallel with reddit-like's dump;
# then reddit-like forward of gatv2 in f32 and bf16 with A (HEAD e2e6cc9),
# B (lazy rescale only) and D; then gatv2 forward and forward+backward on
# the four small graphs, A against D, two rounds.
set -u
for v in gr-A gr-B gr-D go-D; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
cp -r data/cora $D/cora
P=$B/peers; G=/tmp/graphs; mkdir -p $G
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
t checks
( timeout 300 bash test/Integration/run-autodiff.sh $B/bin/go-D $B/bin/gr-D $D cora "$pl" > /tmp/ad.txt 2>&1 ) &
j1=$!
( timeout 300 bash test/Integration/run-half.sh $B/bin/gr-D $D > /tmp/half.txt 2>&1 ) &
j2=$!
( TOOLS=memcheck TYPES=bf16 timeout 300 bash test/Integration/sanitize.sh $B/bin/gr-D $D "$pl" $B/bin/go-D > /tmp/san2.txt 2>&1 ) &
j3=$!
( GNNC_TEST_DEVICE=cuda timeout 300 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_autocast.py -k "gat" > /tmp/py2.txt 2>&1; echo "rc=$?" >> /tmp/py2.txt ) &
j4=$!
python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy > $R/log.txt 2>&1
for g in pubmed musae-github blogcatalog arxiv-like; do python3 $P/dump_graph.py $g $D $G/$g.npy; done >> $R/log.txt 2>&1
wait $j1 $j2 $j3 $j4
{ echo "== run-autodiff"; grep -E "FAIL|passed" /tmp/ad.txt | tail -8; echo "== run-half"; grep -E "FAIL|passed" /tmp/half.txt | tail -8
  echo "== memcheck bf16 powerlaw (with backward functions)"; grep -E "FAIL|passed" /tmp/san2.txt | tail -8
  echo "== pytest nn autocast (gat)"; tail -3 /tmp/py2.txt; } > $R/checks.txt
cat $R/checks.txt
t reddit
prof() { # BIN SET
  timeout 100 $B/bin/$1 $P/$2/gatv2.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps > /tmp/p.json 2>>$R/log.txt
  python3 - /tmp/p.json $1 $2 >> $R/reddit.jsonl <<'PY'
import json, sys
f, b, s = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"bin": b, "set": s, "op": "gatv2", "median_ms": c.get("median_ms"), "steps": [[x["step"], round(x["median_ms"], 4)] for x in c.get("step_ms", [])]}))
except Exception as e:
    print(json.dumps({"bin": b, "set": s, "error": repr(e)}))
PY
}
for set in gnnc_ops_bf16 gnnc_ops; do for bin in gr-A gr-B gr-D; do prof $bin $set; done; done
cat $R/reddit.jsonl
t ab
ab() { # BIN SET GRAPH FLAGS
  timeout 60 $B/bin/$1 $P/$2/gatv2.mlir --graph=$G/$3.npy --backend=cuda $4 --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
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
for r in 1 2; do for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for f in "" "--grad"; do
  for bin in gr-A gr-D; do ab $bin $set $g "$f"; done
done; done; done; done
t done
