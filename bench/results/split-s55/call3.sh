#!/usr/bin/env bash
# Session 55, call 3 (one GPU): the new heavy-row thresholds (gnn::chooseSplit
# from the mean degree: arxiv-like 32 -> 128, reddit-like 32 -> 512, the
# other scoreboard graphs unchanged). (1) the 512 constant against the
# reference: a power-law graph of 4,000 nodes and 100,000 edges (21 rows
# above 512 edges) forced to --split=512, spmm sum, max, GATv2, GT,
# f32 and bf16, forward and --grad; (2) reddit-like: gnnc's forward in f32
# and bf16 (spmm sum, GATv2, GT), the weighted spmm's forward+backward in
# both, cuSPARSE's fp32 and bf16 spmm; (3) both op-level scoreboards
# (bench/scoreboard_both.sh). OUT: the scoreboard's files, checks.txt,
# reddit.txt, call3.tgz.
set -u
xz -dc .carry/bin/gnn-run.xz > /tmp/gnn-run; chmod +x /tmp/gnn-run
source bench/gpu_setup.sh .carry /tmp/w3
P=.carry/peers; G=/tmp/g3; mkdir -p $G
t checks
for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum max gatv2 gt; do for flag in "" --grad; do
  r=$(timeout 60 /tmp/gnn-run $P/$set/$op.mlir --graph=powerlaw:nodes=4000,edges=100000,seed=1 --backend=cuda --split=512 \
        --reps=2 --warmup=1 $flag 2>>$R/err.txt | python3 -c 'import json,sys
d=json.load(sys.stdin); c=d["cuda"]
print("match=%s" % c.get("match"))' 2>>$R/err.txt || echo "match=failed-to-run")
  echo "powerlaw 4000/100000 split=512 $set $op ${flag:-fwd} $r" | tee -a $OUT/checks.txt
done; done; done
t reddit-dump
timeout 90 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $R/log.txt 2>&1
t reddit-gnnc
for set in gnnc_ops gnnc_ops_bf16; do
  for op in spmm_sum gatv2 gt; do
    timeout 60 /tmp/gnn-run $P/$set/$op.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=20 --warmup=5 > $R/r.json 2>>$R/err.txt
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cuda"]; print(sys.argv[2], sys.argv[3], "fwd median_ms %.3f" % c["median_ms"])' $R/r.json $set $op | tee -a $OUT/reddit.txt
  done
  timeout 120 /tmp/gnn-run $P/$set/spmm_sum.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --grad > $R/r.json 2>>$R/err.txt
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cuda"]; print(sys.argv[2], "spmm_sum fwd+bwd median_ms %.3f" % c["fwdbwd_median_ms"])' $R/r.json $set | tee -a $OUT/reddit.txt
done
t reddit-peers
for dt in float32 bfloat16; do
  timeout 90 python3 $P/ops_bench.py --graphs reddit-like --ops spmm-sum --impls cusparse --dtype $dt --datasets $D 2>>$R/log.txt |
    python3 -c 'import json,sys
for l in sys.stdin:
    d=json.loads(l)
    if d.get("impl"): print("cusparse", d.get("dtype","float32"), d["op"], "fwd_ms", d.get("fwd_ms"), "fwdbwd_ms", d.get("fwdbwd_ms"))' | tee -a $OUT/reddit.txt
done
t scoreboard
tar czf $OUT/call3.tgz -C $R .
bash bench/scoreboard_both.sh .carry "$OUT"
cat $OUT/tables.md | grep -E "^forward|^##"
