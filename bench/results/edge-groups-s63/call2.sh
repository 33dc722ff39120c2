#!/usr/bin/env bash
# Session 63, call 2 (one GPU): the attention edge loop taking K edges a
# step (gnnk.for_edges group K: the K edges' indices and rows requested
# before the first shuffle, the online softmax's accumulators rescaled once
# per K edges). An experimental gnn-run (GNNC_XGROUP=K; unset prints the
# committed kernels byte for byte) timed with K = 1, 2, 4 on reddit-like
# (forward, per-step times) and K = 1, 2 alternated on the scoreboard
# graphs (forward and --grad), then checked against the reference with
# K = 2 and 4 (forward, --grad, the forced split, NaN/inf inputs, bf16/f16).
# Before it, alone on the GPU, the hand-written probe
# (bench/probes/grouped/light_groups.cu, built on the build machine).
source bench/results/softmax-s58/common.sh gnn-run-x
gx() { local k=$1; shift; if [ "$k" = 1 ]; then GNNC_CACHE_DIR=/tmp/kc-1 "$@"; else GNNC_CACHE_DIR=/tmp/kc-$k GNNC_XGROUP=$k "$@"; fi; }
rd() { local set=$1 op=$2 k=$3
  gx $k timeout 90 gnn-run-x $P/$set/$op.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps 2>>$R/err.txt |
  python3 -c 'import json,sys
c=json.load(sys.stdin)["cuda"]; print(sys.argv[1], "median %.3f" % c["median_ms"], " ".join("%s=%.3f" % (s["step"], s["median_ms"]) for s in c.get("step_ms", [])))' "$set $op K=$k" >> $OUT/reddit.txt 2>>$R/err.txt; }
prog probe
for skew in 1 3; do timeout 60 .carry/bin/lg 233000 512 $skew; done > $OUT/probe.txt 2>&1
prog reddit-dump
timeout 120 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $R/graphs.txt 2>&1
prog reddit
for k in 1 2 4; do rd gnnc_ops_bf16 gatv2 $k; done
for k in 1 2; do rd gnnc_ops gatv2 $k; rd gnnc_ops_bf16 gt $k; rd gnnc_ops gt $k; done
rd gnnc_ops_bf16 gatv2 1; rd gnnc_ops_bf16 gatv2 2
rm -f $G/reddit-like.npy
prog graphs
dump pubmed musae-github blogcatalog arxiv-like
prog ab
for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for op in gatv2 gt; do
  r=""; for k in 1 2 1 2; do r="$r K$k=$(gx $k one gnn-run-x $set $op $g --reps=30 --warmup=5)"; done
  echo "$g $set $op fwd$r" >> $OUT/ab.txt
done; done; done
prog checks
L=/tmp/logs; mkdir -p $L
pl2="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
for k in 2 4; do
  ( for set in gnnc_ops gnnc_ops_bf16; do for op in gatv2 gt; do for flag in "" --grad; do
      gx $k chk "K=$k $set $op ${flag:-fwd} powerlaw" gnn-run-x $P/$set/$op.mlir --graph=$PL $flag
      gx $k chk "K=$k $set $op ${flag:-fwd} powerlaw split=32 chunks=4" gnn-run-x $P/$set/$op.mlir --graph=$PL --split=32 --max-chunks=4 $flag
    done; done; done ) &
done
( GNNC_XGROUP=2 timeout 150 bash test/Integration/run-nan.sh /tmp/bin/gnn-run-x > $L/nan-K2.txt 2>&1 ) &
( GNNC_XGROUP=2 timeout 150 bash test/Integration/run-half.sh /tmp/bin/gnn-run-x $D > $L/half-K2.txt 2>&1 ) &
( GNNC_XGROUP=2 EXAMPLES="gat gatv2 transformer agnn" timeout 150 bash test/Integration/run-examples.sh /tmp/bin/gnn-run-x $D > $L/examples-K2.txt 2>&1 ) &
wait
prog ab-grad
for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for op in gatv2 gt; do
  r=""; for k in 1 2; do r="$r K$k=$(gx $k one gnn-run-x $set $op $g --reps=20 --warmup=3 --grad)"; done
  echo "$g $set $op grad$r" >> $OUT/ab.txt
done; done; done
prog done
{ grep -c PASS $OUT/checks.txt; grep FAIL -A3 $OUT/checks.txt | head -20
  for f in nan-K2 half-K2 examples-K2; do echo "== $f"; grep -E "^FAIL|passed" $L/$f.txt | tail -6; done; } > $OUT/summary.txt
tar -C /tmp -cJf $OUT/logs.tar.xz logs r 2>/dev/null
cat $OUT/summary.txt
