#!/usr/bin/env bash
# A/B: gnn-run (HEAD) against gnn-run-exp (light-row kernel on a forked stream beside partial+final)
set -u
B=$(realpath .carry); R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
xz -dc $B/bin/gnn-run.xz > /tmp/gr-a; xz -dc $B/bin/gnn-run-exp.xz > /tmp/gr-b; chmod +x /tmp/gr-a /tmp/gr-b
export GNNC_CACHE_DIR=/tmp/gk; mkdir -p -m 700 /tmp/gk
mkdir -p /tmp/g
for g in pubmed musae-github blogcatalog qm9-batch4096 arxiv-like; do
  python3 $B/peers/dump_graph.py $g $B/datasets /tmp/g/$g.npy >> $R/graphs.txt 2>&1
done
start=$(date +%s)
one() { # bin env set op graph extra
  local bin=$1 env=$2 set=$3 op=$4 g=$5; shift 5
  env $env $bin $B/peers/$set/$op.mlir --graph=/tmp/g/$g.npy --backend=cuda --no-check --reps=50 --warmup=10 "$@" 2>>$R/err.txt |
    python3 -c 'import json,sys
d=json.load(sys.stdin)["cuda"]; print("%.4f %s" % (d["median_ms"], ("%.4f" % d["fwdbwd_median_ms"]) if d.get("fwdbwd_median_ms") else "-"))' 2>>$R/err.txt || echo "fail -"
}
for round in 1 2; do
 for set in gnnc_ops_bf16 gnnc_ops; do
  for g in pubmed musae-github blogcatalog qm9-batch4096 arxiv-like; do
   for op in spmm_sum spmm_unweighted max gatv2 gt; do
    [ $(( $(date +%s) - start )) -gt 480 ] && { echo "time up" >> $R/fork.txt; break 4; }
    extra=""; [ $set = gnnc_ops_bf16 ] && [ $round = 1 ] && extra=--grad
    a=$(one /tmp/gr-a X=1 $set $op $g $extra); b=$(one /tmp/gr-b GNNC_EXP_FORK=1 $set $op $g $extra)
    echo "$round $set $g $op A=$a B=$b" >> $R/fork.txt
   done
  done
 done
done
