#!/usr/bin/env bash
set -u
B=$(realpath .carry); R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
xz -dc $B/bin/gnn-run.xz > /tmp/gr-new; xz -dc $B/bin/gnn-run-exp.xz > /tmp/gr-exp; chmod +x /tmp/gr-*
export GNNC_CACHE_DIR=/tmp/gk; mkdir -p -m 700 /tmp/gk; mkdir -p /tmp/g
for g in pubmed musae-github blogcatalog qm9-batch4096 arxiv-like; do
  python3 $B/peers/dump_graph.py $g $B/datasets /tmp/g/$g.npy >> $R/graphs.txt 2>&1
done
start=$(date +%s)
one() { local bin=$1 env=$2 set=$3 op=$4 g=$5; shift 5
  env $env $bin $B/peers/$set/$op.mlir --graph=/tmp/g/$g.npy --backend=cuda --reps=50 --warmup=10 "$@" 2>>$R/err.txt |
    python3 -c 'import json,sys
d=json.load(sys.stdin)["cuda"]; f=lambda k: ("%.4f" % d[k]) if d.get(k) else "-"
print(f("median_ms"), f("fwdbwd_median_ms"), d.get("match","nc"))' 2>>$R/err.txt || echo "fail - -"; }
# correctness first (reference checks) on the graphs whose reference is quick
for set in gnnc_ops_bf16 gnnc_ops; do for g in musae-github blogcatalog qm9-batch4096; do for op in spmm_sum spmm_unweighted max gatv2 gt; do
  echo "$set $g $op new=$(one /tmp/gr-new X=1 $set $op $g --reps=3) noplace=$(one /tmp/gr-exp GNNC_EXP_NOPLACE=1 $set $op $g --reps=3) new-grad=$(one /tmp/gr-new X=1 $set $op $g --reps=3 --grad) noplace-grad=$(one /tmp/gr-exp GNNC_EXP_NOPLACE=1 $set $op $g --reps=3 --grad)" >> $R/checks.txt
done; done; done
echo "checks took $(( $(date +%s) - start )) s" >> $R/checks.txt
for set in gnnc_ops_bf16 gnnc_ops; do for g in pubmed musae-github blogcatalog qm9-batch4096 arxiv-like; do for op in spmm_sum spmm_unweighted max gatv2 gt; do
  [ $(( $(date +%s) - start )) -gt 520 ] && { echo "time up" >> $R/time.txt; break 3; }
  a=$(one /tmp/gr-new GNNC_CONCURRENT_LAUNCHES=0 $set $op $g --no-check)
  b=$(one /tmp/gr-new X=1 $set $op $g --no-check)
  c=$(one /tmp/gr-exp GNNC_EXP_NOPLACE=1 $set $op $g --no-check)
  ag=$(one /tmp/gr-new GNNC_CONCURRENT_LAUNCHES=0 $set $op $g --no-check --grad)
  cg=$(one /tmp/gr-exp GNNC_EXP_NOPLACE=1 $set $op $g --no-check --grad)
  echo "$set $g $op seq=$a new=$b noplace=$c | grad seq=$ag noplace=$cg" >> $R/time.txt
done; done; done
