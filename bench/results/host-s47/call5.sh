#!/usr/bin/env bash
# Call 5, right after call 4 on the same machine: Cora's epochs beside an
# MLP's with no graph (epoch_floor.py); issue 29's reddit-like
# points, not run since the issue was filed: peers (cuSPARSE, turbo-gnn;
# fp32 and bf16) and gnnc's SpMM (weighted and not), GATv2 and GT forward
# in f32 and bf16, the weighted SpMM's forward+backward in f32 (--no-check:
# the reference is too slow there).
set -u
[ -x .carry/bin/gnn-run ] || { xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run; }
source bench/gpu_setup.sh .carry "$OUT"
W=$R  # straight under OUT: what ran comes back even past the limit
P=$B/peers; G=/tmp/graphs47; mkdir -p $G
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $W/log.txt 2>&1
t epoch-floor
timeout 120 python3 bench/probes/host/epoch_floor.py > $W/epoch-floor.txt 2>&1
t reddit-peers
for dt in float32 bfloat16; do
  timeout 120 python3 $P/ops_bench.py --graphs reddit-like --ops spmm-sum,gatv2,gt --impls cusparse,turbo-gnn --dtype $dt --datasets $D > $W/reddit-peers-$dt.jsonl 2>> $W/log.txt
done
t reddit-dump
timeout 90 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $W/log.txt 2>&1
t reddit-gnnc
for dt in float32 bfloat16; do
  set=gnnc_ops; [ $dt = bfloat16 ] && set=gnnc_ops_bf16
  for op in spmm_sum spmm_unweighted gatv2 gt; do
    echo "== $dt $op" >> $W/reddit-gnnc.txt
    timeout 50 $B/bin/gnn-run $P/$set/$op.mlir --graph=$G/reddit-like.npy --backend=cuda --reps=20 --warmup=5 --no-check >> $W/reddit-gnnc.txt 2>&1
  done
done
echo "== float32 spmm_sum --grad" >> $W/reddit-gnnc.txt
timeout 120 $B/bin/gnn-run $P/gnnc_ops/spmm_sum.mlir --graph=$G/reddit-like.npy --backend=cuda --reps=20 --warmup=5 --no-check --grad >> $W/reddit-gnnc.txt 2>&1
t done


