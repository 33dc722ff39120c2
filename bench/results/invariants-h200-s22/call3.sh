#!/usr/bin/env bash
# Session 22 call 3: edge-invariant loads out of edge loops and __expf for
# half-precision attention. Checks in parallel (run-autodiff on cora and a
# power-law graph, run-half, memcheck over every family f32/bf16 with the
# autodiff backward functions, CUDA pytest), then old (553af79) vs new
# forward+backward of the scoreboard ops on the five graphs.
set -u
for v in gnn-run gnn-run-old gnn-opt; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
cp -r data/cora $D/cora
P=$B/peers; G=/tmp/graphs; mkdir -p $G
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
t checks
( timeout 400 bash test/Integration/run-autodiff.sh $B/bin/gnn-opt $B/bin/gnn-run $D cora "$pl" > /tmp/ad.txt 2>&1 ) &
j1=$!
( timeout 400 bash test/Integration/run-half.sh $B/bin/gnn-run $D > /tmp/half.txt 2>&1 ) &
j2=$!
( TOOLS=memcheck TYPES=f32 timeout 400 bash test/Integration/sanitize.sh $B/bin/gnn-run $D musae-github $B/bin/gnn-opt > /tmp/san1.txt 2>&1 ) &
j3=$!
( TOOLS=memcheck TYPES=bf16 CHUNKS=8192 timeout 400 bash test/Integration/sanitize.sh $B/bin/gnn-run $D "$pl" > /tmp/san2.txt 2>&1 ) &
j4=$!
( GNNC_TEST_DEVICE=cuda timeout 400 python -m pytest -q -x -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py > /tmp/py1.txt 2>&1; echo "rc=$?" >> /tmp/py1.txt ) &
j5=$!
( GNNC_TEST_DEVICE=cuda timeout 400 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_autocast.py -k "gat or transformer or agnn or max or sage" > /tmp/py2.txt 2>&1; echo "rc=$?" >> /tmp/py2.txt ) &
j6=$!
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
wait $j1 $j2 $j3 $j4 $j5 $j6
{ echo "== run-autodiff"; grep -E "FAIL|passed" /tmp/ad.txt | tail -8; echo "== run-half"; grep -E "FAIL|passed" /tmp/half.txt | tail -8
  echo "== memcheck f32 musae-github"; grep -E "FAIL|passed" /tmp/san1.txt | tail -8; echo "== memcheck bf16 powerlaw"; grep -E "FAIL|passed" /tmp/san2.txt | tail -8
  echo "== pytest core half"; tail -5 /tmp/py1.txt; echo "== pytest nn autocast"; tail -5 /tmp/py2.txt; } > $R/checks.txt
t ab
ab() { # BIN SET GRAPH OP
  timeout 60 $B/bin/$1 $P/$2/$4.mlir --graph=$G/$3.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 - /tmp/a.json $1 $2 $3 $4 >> $R/ab.jsonl <<'PY'
import json, sys
f, b, s, g, op = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"bin": b, "set": s, "graph": g, "op": op, "fwdbwd_ms": c.get("fwdbwd_median_ms"), "fwd_ms": c["fwd"].get("median_ms"), "bwd_ms": c["bwd"].get("median_ms")}))
except Exception as e:
    print(json.dumps({"bin": b, "set": s, "graph": g, "op": op, "error": repr(e)}))
PY
}
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do for op in gatv2 gt max spmm_sum; do for set in gnnc_ops_bf16 gnnc_ops; do
  for bin in gnn-run-old gnn-run; do ab $bin $set $g $op; done
done; done; done
t done
