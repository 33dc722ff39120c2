#!/usr/bin/env bash
# Session 70, call 1 (one GPU): aggregation edge loops taking 8 masked edges
# a step (P) against one edge a step unrolled by 4 (A = 169d3af's gnn-run,
# the same kernels as the base of this change); P2 = P with a register
# budget of 128 on the heavy rows' partial kernels too. Parts, most wanted
# first:
#  check  P's gnn-run --grad against the reference evaluator: spmm_sum, max
#         and gatv2 on pubmed, musae-github and blogcatalog, f32 and bf16
#  fwd    forward medians of 20, A P A P, the three aggregation ops on five
#         graphs, f32 and bf16
#  grad   forward+backward, A P P2, the five ops on three graphs, f32 and
#         bf16
set -u
mkdir -p /tmp/bin
for v in A:gnn-run-C P:gnn-run-P P2:gnn-run-P2; do xz -dc .carry/bin/${v#*:}.xz > /tmp/bin/${v%%:*}; done; chmod +x /tmp/bin/*
source bench/gpu_setup.sh .carry "$OUT"
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
for g in pubmed musae-github blogcatalog; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > /tmp/dump.log 2>&1
python3 $P/dump_graph.py qm9-batch4096 $D $G/qm9.npy >> /tmp/dump.log 2>&1
python3 $P/dump_graph.py arxiv-like /tmp $G/arxiv-like.npy >> /tmp/dump.log 2>&1
sets() { [ "$1" = f32 ] && echo gnnc_ops || echo gnnc_ops_bf16; }
ms() {  # the last run's forward or forward+backward median
  python3 -c "import json,sys; c=json.load(open('/tmp/r.json')).get('cuda',{}); print(c.get(sys.argv[1]))" "$1" 2>/dev/null || echo error; }
t check
for dt in bf16 f32; do for g in pubmed musae-github blogcatalog; do
  for op in spmm_sum max gatv2; do
    timeout 60 /tmp/bin/P $P/$(sets $dt)/$op.mlir --graph=$G/$g.npy --backend=cuda --grad --reps=2 > /tmp/c.json 2> /tmp/c.err
    echo "$dt $g $op rc=$? $(grep -o '"match": [a-z]*' /tmp/c.json | sort | uniq -c | tr '\n' ' ') $(grep -i error /tmp/c.err | head -1)" >> "$OUT"/check.txt
  done; done; done
t fwd
for dt in bf16 f32; do for g in pubmed qm9 musae-github blogcatalog arxiv-like; do
  for op in spmm_sum spmm_unweighted max; do
    line="$dt $g $op"
    for v in A P A P; do
      timeout 30 /tmp/bin/$v $P/$(sets $dt)/$op.mlir --graph=$G/$g.npy --backend=cuda --no-check --reps=20 --warmup=5 > /tmp/r.json 2>/dev/null
      line="$line $v=$(ms median_ms)"
    done
    echo "$line" >> "$OUT"/fwd.txt
  done; done; done
t grad
for dt in bf16 f32; do for g in pubmed blogcatalog arxiv-like; do
  for op in spmm_sum spmm_unweighted max gatv2 gt; do
    line="$dt $g $op"
    for v in A P P2; do
      timeout 30 /tmp/bin/$v $P/$(sets $dt)/$op.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/r.json 2>/dev/null
      line="$line $v=$(ms fwdbwd_median_ms)"
    done
    echo "$line" >> "$OUT"/grad.txt
  done; done; done
t done
cat "$OUT"/check.txt "$OUT"/fwd.txt "$OUT"/grad.txt 2>/dev/null
