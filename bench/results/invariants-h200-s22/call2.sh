#!/usr/bin/env bash
# Session 22 call 2: would feature tiles that fit in L2 pay on reddit-like?
# Forward of spmm-sum at F = 32, 64, 128 and GT / GATv2 at 1, 2, 4 heads, in
# f32 and bf16 (a tile's pass over the whole graph, bench/probes/l2tile),
# with cuSPARSE's spmm-sum at F = 128 beside them.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G
t dump
python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy > $R/log.txt 2>&1
t probes
prof() { # FILE LABEL
  timeout 90 $B/bin/gnn-run $1 --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps > /tmp/p.json 2>>$R/log.txt
  python3 - /tmp/p.json $2 >> $R/probe.jsonl <<'PY'
import json, sys
f, label = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"probe": label, "median_ms": c.get("median_ms"), "steps": [[x["step"], round(x["median_ms"], 4)] for x in c.get("step_ms", [])]}))
except Exception as e:
    print(json.dumps({"probe": label, "error": repr(e)}))
PY
}
for f in bench/probes/l2tile/*.mlir; do prof $f $(basename $f .mlir); done
for op in gt gatv2; do prof $P/gnnc_ops/$op.mlir ${op}_f32_h4; prof $P/gnnc_ops_bf16/$op.mlir ${op}_bf16_h4; done
t peers
timeout 100 python3 $P/ops_bench.py --graphs reddit-like --ops spmm-sum --impls cusparse --dtype float32 --datasets $D > $R/peers.jsonl 2>> $R/log.txt
t done
