#!/usr/bin/env bash
# Session 67, call 2 (one GPU), binaries of 26d6799 (the bf16 share): the
# heavy-row split threshold of the max's training step (--split: the
# model's choice -1, none 0, 512, 2048) on three graphs, bf16 and f32,
# forward+backward medians of 50; then compute-sanitizer on the changed
# max kernels (memcheck, bf16 and f16, chunks of 8,192 and 4) and racecheck
# on the f16 cases that session 66's call 6 did not reach at 4 chunks.
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT" > /dev/null 2>&1
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
for g in musae-github blogcatalog arxiv-like; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > /tmp/dump.log 2>&1
t split
for g in arxiv-like musae-github blogcatalog; do
  for set in gnnc_ops_bf16 gnnc_ops; do
    for s in -1 0 512 2048 -1; do
      timeout 60 /tmp/bin/gnn-run $P/$set/max.mlir --graph=$G/$g.npy --backend=cuda --split=$s \
        --grad --no-check --reps=50 --warmup=10 > /tmp/o.json 2> /tmp/o.err
      python3 - $g $set $s <<'PY' >> "$OUT"/split.txt
import json, sys
try:
    c = json.load(open("/tmp/o.json"))["cuda"]
    print(*sys.argv[1:], "fwd", round(c["fwd"]["median_ms"], 4), "bwd", round(c["bwd"]["median_ms"], 4),
          "fwdbwd", round(c.get("fwdbwd_median_ms"), 4))
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/o.err").read()[:300])
PY
    done
  done
done
cat "$OUT"/split.txt
t memcheck
TOOLS=memcheck CHUNKS="8192 4" TYPES="bf16 f16" CASES='sage_max|spmm_max' timeout 120 bash test/Integration/sanitize.sh \
  /tmp/bin/gnn-run "$D" musae-github /tmp/bin/gnn-opt > $OUT/memcheck-max.txt 2>&1
tail -2 $OUT/memcheck-max.txt
t racecheck
TOOLS=racecheck CHUNKS="4" TYPES="f16" CASES='sage_max|spmm_max|sddmm_dot|attention_dot|attention_leaky|rgcn|gat-f16-|gcn-f16-' \
  timeout ${LIMIT:-150} bash test/Integration/sanitize.sh \
  /tmp/bin/gnn-run "$D" musae-github /tmp/bin/gnn-opt > $OUT/racecheck-f16-4.txt 2>&1
grep -c "PASS" $OUT/racecheck-f16-4.txt; grep "FAIL" $OUT/racecheck-f16-4.txt | head; tail -2 $OUT/racecheck-f16-4.txt
t done
