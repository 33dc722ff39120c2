#!/usr/bin/env bash
# Session 22 call 1: per-step profiles (forward and backward programs) of
# max, gatv2, gt --grad in bf16 and f32 on blogcatalog, musae-github,
# arxiv-like; reddit-like forward of spmm_sum, gatv2, gt in bf16 and f32
# (issue 29's "bf16 >= 1.6x fp32"); bench/reorder.py on four graphs.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G
t dump
for g in blogcatalog musae-github arxiv-like pubmed; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
( python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> /tmp/rdump.txt 2>&1 ) &
rd=$!
t profiles
prof() { # GRAPH OP SET EXTRA-FLAGS
  timeout 60 $B/bin/gnn-run $P/$3/$2.mlir --graph=$G/$1.npy --backend=cuda $4 --no-check --reps=20 --warmup=3 --profile-steps > /tmp/p.json 2>>$R/log.txt
  python3 - /tmp/p.json $1 $2 $3 >> $R/profile.jsonl <<'PY'
import json, sys
f, g, op, s = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    st = lambda ph: [[x["step"], round(x["median_ms"], 4)] for x in c.get(ph, {}).get("step_ms", [])]
    print(json.dumps({"graph": g, "op": op, "set": s, "fwdbwd_ms": c.get("fwdbwd_median_ms"), "median_ms": c.get("median_ms"),
                      "fwd_ms": c.get("fwd", {}).get("median_ms"), "bwd_ms": c.get("bwd", {}).get("median_ms"),
                      "steps": [[x["step"], round(x["median_ms"], 4)] for x in c.get("step_ms", [])],
                      "fwd_steps": st("fwd"), "bwd_steps": st("bwd")}))
except Exception as e:
    print(json.dumps({"graph": g, "op": op, "set": s, "error": repr(e)}))
PY
}
for g in blogcatalog musae-github arxiv-like; do for op in max gatv2 gt; do for set in gnnc_ops gnnc_ops_bf16; do
  prof $g $op $set --grad
done; done; done
t reorder
timeout 200 python3 bench/reorder.py --datasets $D --graphs pubmed musae-github blogcatalog $G/arxiv-like.npy --dtype bfloat16 > $R/reorder.txt 2>> $R/log.txt
t reddit
wait $rd; cat /tmp/rdump.txt >> $R/log.txt
for op in spmm_sum gatv2 gt; do for set in gnnc_ops gnnc_ops_bf16; do prof reddit-like $op $set ""; done; done
t done
