#!/usr/bin/env bash
# Session 22 call 4 (final code): the checks of call 3 again (edge-invariant
# ops now move with copies of their constants; the split's placement needs
# rows wide enough for a state), then reddit-like forward of spmm_sum,
# gatv2, gt in f32 and bf16 with the new build, gatv2/gt with the old one.
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
( TOOLS=memcheck TYPES=bf16 timeout 400 bash test/Integration/sanitize.sh $B/bin/gnn-run $D "$pl" > /tmp/san2.txt 2>&1 ) &
j4=$!
( GNNC_TEST_DEVICE=cuda timeout 400 python -m pytest -q -x -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py > /tmp/py1.txt 2>&1; echo "rc=$?" >> /tmp/py1.txt ) &
j5=$!
( GNNC_TEST_DEVICE=cuda timeout 400 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_autocast.py -k "gat or transformer or agnn or max or sage" > /tmp/py2.txt 2>&1; echo "rc=$?" >> /tmp/py2.txt ) &
j6=$!
python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy > $R/log.txt 2>&1
wait $j1 $j2 $j3 $j4 $j5 $j6
{ echo "== run-autodiff"; grep -E "FAIL|passed" /tmp/ad.txt | tail -8; echo "== run-half"; grep -E "FAIL|passed" /tmp/half.txt | tail -8
  echo "== memcheck f32 musae-github"; grep -E "FAIL|passed" /tmp/san1.txt | tail -8; echo "== memcheck bf16 powerlaw"; grep -E "FAIL|passed" /tmp/san2.txt | tail -8
  echo "== pytest core half"; tail -3 /tmp/py1.txt; echo "== pytest nn autocast"; tail -3 /tmp/py2.txt; } > $R/checks.txt
t reddit
prof() { # BIN FILE LABEL
  timeout 90 $B/bin/$1 $2 --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps > /tmp/p.json 2>>$R/log.txt
  python3 - /tmp/p.json $3 $1 >> $R/reddit.jsonl <<'PY'
import json, sys
f, label, b = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"probe": label, "bin": b, "median_ms": c.get("median_ms"), "steps": [[x["step"], round(x["median_ms"], 4)] for x in c.get("step_ms", [])]}))
except Exception as e:
    print(json.dumps({"probe": label, "bin": b, "error": repr(e)}))
PY
}
for op in spmm_sum gatv2 gt; do for set in gnnc_ops gnnc_ops_bf16; do prof gnn-run $P/$set/$op.mlir $op-$set; done; done
for op in gatv2 gt; do for set in gnnc_ops gnnc_ops_bf16; do prof gnn-run-old $P/$set/$op.mlir $op-$set; done; done
t done
