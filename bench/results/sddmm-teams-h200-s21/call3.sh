#!/usr/bin/env bash
# Session 21 call 3: how many vectors each lane of an sddmm team takes (an
# experiment build reading GNNC_EXP_VPL: unset = one vector per lane, the
# committed rule; 2; 4). spmm_sum --grad, bf16 and f32, on the five
# scoreboard graphs (two interleaved rounds) and reddit-like, with the
# forward's and backward's per-step times.
set -u
xz -dc .carry/bin/gnn-run-exp.xz > .carry/bin/gnn-run-exp; chmod +x .carry/bin/gnn-run-exp
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G
graphs="pubmed musae-github blogcatalog arxiv-like qm9-batch4096"
t dump
for g in $graphs reddit-like; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
run() { # VARIANT GRAPH SET REPS ROUND
  local v=$1 g=$2 set=$3 reps=$4 rnd=$5
  if [ "$v" = 1 ]; then env -u GNNC_EXP_VPL GNNC_CACHE_DIR=/tmp/gk-$v timeout 150 $B/bin/gnn-run-exp $P/$set/spmm_sum.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=$reps --warmup=3 --profile-steps > /tmp/ab.json 2>>$R/log.txt
  else GNNC_EXP_VPL=$v GNNC_CACHE_DIR=/tmp/gk-$v timeout 150 $B/bin/gnn-run-exp $P/$set/spmm_sum.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=$reps --warmup=3 --profile-steps > /tmp/ab.json 2>>$R/log.txt; fi
  python3 - /tmp/ab.json $v $g $set $rnd >> $R/ab.jsonl <<'PY'
import json, sys
f, v, g, s, rnd = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"variant": int(v), "graph": g, "set": s, "round": int(rnd), "fwdbwd_ms": c.get("fwdbwd_median_ms"),
                      "fwd_ms": c["fwd"].get("median_ms"), "bwd_ms": c["bwd"].get("median_ms"),
                      "fwd_steps": c["fwd"].get("step_ms"), "bwd_steps": c["bwd"].get("step_ms")}))
except Exception as e:
    print(json.dumps({"variant": int(v), "graph": g, "set": s, "round": int(rnd), "error": repr(e)}))
PY
}
mkdir -p -m 700 /tmp/gk-1 /tmp/gk-2 /tmp/gk-4
t small
for rnd in 1 2; do for g in $graphs; do for set in gnnc_ops_bf16 gnnc_ops; do for v in 1 2 4; do run $v $g $set 50 $rnd; done; done; done; done
t reddit
for set in gnnc_ops gnnc_ops_bf16; do for v in 1 2 4; do run $v reddit-like $set 10 1; done; done
t done
