#!/usr/bin/env bash
# Call 2: A/B of the leaky-ReLU select as one maximum (new) against HEAD's
# binary (old), and of an occupancy floor on the split kernels
# (GNNC_EXP_SPLIT_MINBLOCKS, an experiment-only knob of the new binary:
# __launch_bounds__(256, N) on *_partial and *_final). GATv2 and GT forward
# on reddit-like (f32, bf16), GATv2 forward and --grad on the scoreboard's
# graphs; the new binary's results checked against the reference there.
set -u
for f in gnn-run; do [ -x .carry/bin/$f ] || { xz -dc .carry/bin/$f.xz > .carry/bin/$f; chmod +x .carry/bin/$f; }; done
xz -dc .carry/exp/gnn-run-new.xz > /tmp/gnn-run-new; chmod +x /tmp/gnn-run-new
source bench/gpu_setup.sh .carry "$OUT"
W=$R; P=$B/peers; G=/tmp/graphs48; mkdir -p $G
summ() { python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["cuda"]; print("%.4f" % c["median_ms"], d.get("check", d.get("matches", "")))' 2>&1 | head -1; }
var() { # variant -> command prefix
  case $1 in
    old) echo "env $B/bin/gnn-run";;
    new) echo "env /tmp/gnn-run-new";;
    mb4) echo "env GNNC_EXP_SPLIT_MINBLOCKS=4 /tmp/gnn-run-new";;
    mb5) echo "env GNNC_EXP_SPLIT_MINBLOCKS=5 /tmp/gnn-run-new";;
  esac; }
t dump
timeout 90 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $W/log.txt 2>&1
timeout 60 python3 $P/dump_graph.py arxiv-like $D $G/arxiv-like.npy >> $W/log.txt 2>&1
t reddit
for round in 1 2; do
  for dt in bfloat16 float32; do
    set=gnnc_ops; [ $dt = bfloat16 ] && set=gnnc_ops_bf16
    for op in gatv2 gt; do
      for v in old new mb4 mb5; do
        ms=$(timeout 60 $(var $v) $P/$set/$op.mlir --graph=$G/reddit-like.npy --backend=cuda --reps=20 --warmup=5 --no-check 2>>$W/log.txt | summ)
        echo "reddit-like $dt $op $v round$round $ms" >> $W/reddit.txt
      done
    done
  done
done
t small
for g in $G/arxiv-like.npy $D/musae-github $D/blogcatalog $D/pubmed; do
  for dt in bfloat16 float32; do
    set=gnnc_ops; [ $dt = bfloat16 ] && set=gnnc_ops_bf16
    for grad in "" --grad; do
      for v in old new mb4 mb5; do
        ms=$(timeout 60 $(var $v) $P/$set/gatv2.mlir --graph=$g --backend=cuda --reps=30 --warmup=5 --no-check $grad 2>>$W/log.txt | summ)
        echo "$(basename $g) $dt gatv2${grad} $v $ms" >> $W/small.txt
      done
    done
  done
done
t checks
for g in $D/musae-github $D/blogcatalog $D/pubmed; do
  for dt in bfloat16 float32; do
    set=gnnc_ops; [ $dt = bfloat16 ] && set=gnnc_ops_bf16
    for grad in "" --grad; do
      timeout 90 /tmp/gnn-run-new $P/$set/gatv2.mlir --graph=$g --backend=cuda --reps=1 --warmup=0 $grad > $W/check.json 2>> $W/log.txt
      echo "$(basename $g) $dt gatv2$grad rc=$? $(python3 -c 'import json; d=json.load(open("'$W/check.json'")); c=d["cuda"]; print({k: c.get(k) for k in ("match", "max_abs_error", "worst_ratio_to_tolerance", "tolerance")}, {k: v.get("match") for k, v in c.items() if isinstance(v, dict) and "match" in v})' 2>&1 | head -c 400)" >> $W/checks.txt
    done
  done
done
t done
