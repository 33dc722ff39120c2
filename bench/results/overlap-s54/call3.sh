#!/usr/bin/env bash
# Session 54, call 3 (one GPU): the final code. (1) f32 and bf16 forward and
# forward+backward, the session's start (gnn-run-old: HEAD's kernels, states
# in light rows, GNNC_CONCURRENT_LAUNCHES=0) against this build (states in
# their own buffer, the light-row kernel beside the partial and final ones);
# (2) the runtime's GPU gtests; (3) the whole Python suite on CUDA, 8 shards.
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-opt gnn-translate gnn-run-old GNNRuntimeTests; do
  xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v
done
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/g
t graphs
for g in pubmed musae-github blogcatalog arxiv-like; do
  python3 .carry/peers/dump_graph.py $g $D /tmp/g/$g.npy >> $R/graphs.txt 2>&1
done
one() { local bin=$1 env=$2 set=$3 op=$4 g=$5; shift 5
  env $env $bin .carry/peers/$set/$op.mlir --graph=/tmp/g/$g.npy --backend=cuda --no-check --reps=50 --warmup=10 "$@" 2>>$R/err.txt |
    python3 -c 'import json,sys
d=json.load(sys.stdin)["cuda"]; f=lambda k: ("%.4f" % d[k]) if d.get(k) else "-"
print(f("median_ms"), f("fwdbwd_median_ms"))' 2>>$R/err.txt || echo "fail -"; }
t timing
start=$(date +%s)
for set in gnnc_ops gnnc_ops_bf16; do for g in musae-github blogcatalog pubmed arxiv-like; do for op in spmm_sum max gatv2 gt; do
  [ $(( $(date +%s) - start )) -gt 140 ] && { echo "time up" >> $R/time.txt; break 3; }
  echo "$set $g $op old=$(one gnn-run-old GNNC_CONCURRENT_LAUNCHES=0 $set $op $g) new=$(one gnn-run X=1 $set $op $g) old-grad=$(one gnn-run-old GNNC_CONCURRENT_LAUNCHES=0 $set $op $g --grad) new-grad=$(one gnn-run X=1 $set $op $g --grad)" >> $R/time.txt
done; done; done
t gtest
GNNC_DATASETS=$D timeout 120 GNNRuntimeTests --gtest_filter='Gpu*' > $R/gtest.txt 2>&1; echo "rc=$?" >> $R/gtest.txt
t pytest
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
bash bench/cuda_suite.sh $W $S 8 290
t done
tar czf $R/logs.tgz -C $W .
