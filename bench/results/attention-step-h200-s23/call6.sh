#!/usr/bin/env bash
# Session 23 call 6: the attention edge step (online softmax rescaled only
# where the maximum moved; leaky ReLU as one maximum). Checks with the new
# build (C) in parallel, then the forward (and GATv2's forward+backward) of
# gatv2 and gt in f32 and bf16 on the four small scoreboard graphs with
# A (HEAD e2e6cc9), B (rescale only) and C (both), interleaved.
set -u
for v in gr-A gr-B gr-C go-C; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
cp -r data/cora $D/cora
P=$B/peers; G=/tmp/graphs; mkdir -p $G
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
t checks
( timeout 420 bash test/Integration/run-autodiff.sh $B/bin/go-C $B/bin/gr-C $D cora "$pl" > /tmp/ad.txt 2>&1 ) &
j1=$!
( timeout 420 bash test/Integration/run-half.sh $B/bin/gr-C $D > /tmp/half.txt 2>&1 ) &
j2=$!
( TOOLS=memcheck TYPES=f32 timeout 420 bash test/Integration/sanitize.sh $B/bin/gr-C $D musae-github $B/bin/go-C > /tmp/san1.txt 2>&1 ) &
j3=$!
( TOOLS=memcheck TYPES=bf16 timeout 420 bash test/Integration/sanitize.sh $B/bin/gr-C $D "$pl" > /tmp/san2.txt 2>&1 ) &
j4=$!
( GNNC_TEST_DEVICE=cuda timeout 420 python -m pytest -q -x -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py > /tmp/py1.txt 2>&1; echo "rc=$?" >> /tmp/py1.txt ) &
j5=$!
( GNNC_TEST_DEVICE=cuda timeout 420 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_autocast.py python/tests/test_nn_cuda.py -k "gat or transformer or agnn" > /tmp/py2.txt 2>&1; echo "rc=$?" >> /tmp/py2.txt ) &
j6=$!
for g in pubmed musae-github blogcatalog arxiv-like; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
wait $j1 $j2 $j3 $j4 $j5 $j6
{ echo "== run-autodiff"; grep -E "FAIL|passed" /tmp/ad.txt | tail -8; echo "== run-half"; grep -E "FAIL|passed" /tmp/half.txt | tail -8
  echo "== memcheck f32 musae-github"; grep -E "FAIL|passed" /tmp/san1.txt | tail -8; echo "== memcheck bf16 powerlaw"; grep -E "FAIL|passed" /tmp/san2.txt | tail -8
  echo "== pytest core half"; tail -3 /tmp/py1.txt; echo "== pytest nn autocast nn_cuda (attention)"; tail -3 /tmp/py2.txt; } > $R/checks.txt
cat $R/checks.txt
t ab
ab() { # BIN SET GRAPH OP FLAGS
  timeout 60 $B/bin/$1 $P/$2/$4.mlir --graph=$G/$3.npy --backend=cuda $5 --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 - /tmp/a.json $1 $2 $3 $4 "$5" >> $R/ab.jsonl <<'PY'
import json, sys
f, b, s, g, op, flags = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    ms = c.get("fwdbwd_median_ms") if flags else c.get("median_ms")
    print(json.dumps({"bin": b, "set": s, "graph": g, "op": op, "flags": flags, "ms": ms}))
except Exception as e:
    print(json.dumps({"bin": b, "set": s, "graph": g, "op": op, "flags": flags, "error": repr(e)}))
PY
}
for r in 1 2; do for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for op in gatv2 gt; do
  for bin in gr-A gr-B gr-C; do ab $bin $set $g $op ""; done; done
  for bin in gr-A gr-C; do ab $bin $set $g gatv2 "--grad"; done
done; done; done
t done
