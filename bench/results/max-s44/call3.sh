#!/usr/bin/env bash
# Call 3: the max backward's ties in rows that are not long, walked by edge
# (a lane per element) when a slice holds at least N tie elements, else one
# tie element at a time (as before: N = 33, never). gnn-run --grad
# --profile-steps of each variant, bf16 and f32, checked against the
# reference (arxiv-like --no-check), rounds interleaved.
set -u
source bench/gpu_setup.sh .carry "$OUT"
for n in 2 4 8 33; do xz -dc .carry/var/gnn-run-$n.xz > /tmp/gnn-run-$n; chmod +x /tmp/gnn-run-$n; done
P=$B/peers; G=/tmp/graphs; mkdir -p $G
t dump
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
sed 's/bf16/f32/g' $P/gnnc_ops_bf16/max.mlir > /tmp/max-f32.mlir
t runs
for round in 1 2; do
  for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
    chk=""; [ $g = arxiv-like ] && chk=--no-check
    for dt in bf16 f32; do
      f=$P/gnnc_ops_bf16/max.mlir; [ $dt = f32 ] && f=/tmp/max-f32.mlir
      for n in 33 2 4 8; do
        echo "== $round $g $dt $n" >> $R/steps.txt
        timeout 60 /tmp/gnn-run-$n $f --graph=$G/$g.npy --backend=cuda --grad $chk --reps=20 --warmup=5 --profile-steps >> $R/steps.txt 2>&1
      done
    done
  done
  t "round $round"
done
t done
