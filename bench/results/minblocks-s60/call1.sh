#!/usr/bin/env bash
# Session 60, call 1 (one GPU): the register cap of the split rows' final
# kernels. ptxas, given only __launch_bounds__(256), keeps attention_0_final
# at 40 (f32) / 64 (bf16) registers and spills 36 bytes; with a second
# argument (min blocks per SM) 1-3 it takes 76-108 and spills nothing.
# An experimental gnn-run (GNNC_XMINB=N: min blocks N on every *_final
# kernel of 128 threads or more; with GNNC_XMINB_ALL on every such kernel;
# not committed) timed on reddit-like (forward, per-step times) and on the
# scoreboard graphs, each variant in the same run.
source bench/results/softmax-s58/common.sh gnn-run
# rd SET OP N: reddit-like forward of SET/OP with min blocks N: median and steps
rd() { GNNC_XMINB=$3 timeout 90 gnn-run $P/$1/$2.mlir --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps 2>>$R/err.txt |
  python3 -c 'import json,sys
c=json.load(sys.stdin)["cuda"]; print(sys.argv[1], "median %.3f" % c["median_ms"], " ".join("%s=%.3f" % (s["step"], s["median_ms"]) for s in c.get("step_ms", [])))' "$1 $2 minb=$3" >> $OUT/reddit.txt 2>>$R/err.txt; }
prog reddit-dump
timeout 90 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $R/graphs.txt 2>&1
prog reddit
for n in 0 3 2; do rd gnnc_ops_bf16 gatv2 $n; rd gnnc_ops gatv2 $n; done
rd gnnc_ops_bf16 gatv2 1
for n in 0 3; do rd gnnc_ops_bf16 gt $n; rd gnnc_ops gt $n; done
for n in 0 3; do rd gnnc_ops_bf16 spmm_sum $n; done
rm -f $G/reddit-like.npy
prog graphs
dump pubmed musae-github blogcatalog arxiv-like
prog ab
for g in pubmed musae-github blogcatalog arxiv-like; do for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum max gatv2 gt; do
  r=""; for n in 0 3 0 3; do r="$r m$n=$(GNNC_XMINB=$n one gnn-run $set $op $g --reps=30 --warmup=5)"; done
  echo "$g $set $op fwd$r" >> $OUT/ab.txt
done; done; done
prog checks
for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum max gatv2 gt; do
  GNNC_XMINB=3 chk "$set $op fwd powerlaw split=32 chunks=4 minb=3" gnn-run $P/$set/$op.mlir --graph=$PL --split=32 --max-chunks=4
done; done
chk "mixed_bf16_f32 @f --grad powerlaw" gnn-run test/Integration/Inputs/mixed_bf16_f32.mlir --function=f --graph=$PL --grad
chk "mixed_bf16_f32 @f --grad cora" gnn-run test/Integration/Inputs/mixed_bf16_f32.mlir --function=f --graph=$D/cora --grad
prog done
tail -5 $R/err.txt > $OUT/err-tail.txt
