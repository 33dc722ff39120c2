#!/usr/bin/env bash
# Session 58, the steps calls 1-3 share (sourced with the binaries to unpack
# from .carry/bin as arguments; factored out of the calls' scripts after
# they ran, the steps are the ones they ran): the binaries under /tmp/bin on
# PATH, bench/gpu_setup.sh, the data-set and graph folders (P, G), the
# device's name, and
#   prog STEP          a progress line in $OUT/progress.txt
#   chk WHAT CMD...    CMD against the reference (PASS/FAIL in $OUT/checks.txt)
#   one BIN SET OP G   BIN's median ms of OP (SET: gnnc_ops or gnnc_ops_bf16)
#                      on graph G, forward+backward with --grad
# (call 1's `one` read median_ms eagerly and printed "fail" for --grad; the
# form below is calls 2-3's).
set -u
mkdir -p /tmp/bin
for b in "$@"; do xz -dc .carry/bin/$b.xz > /tmp/bin/$b; chmod +x /tmp/bin/$b; done
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry /tmp/r 2>/dev/null
P=.carry/peers; G=/tmp/g; mkdir -p $G
prog() { echo "== $1 $(date +%T)" >> $OUT/progress.txt; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/device.txt
PL="powerlaw:nodes=4000,edges=100000,seed=1,alpha=1.2"
chk() { local what=$1; shift
  out=$(timeout 60 "$@" --backend=cuda --reps=2 --warmup=1 2>&1); rc=$?
  if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '"match": true' && ! printf '%s' "$out" | grep -q '"match": false'; then
    echo "PASS $what"; else echo "FAIL $what rc=$rc"; printf '%s\n' "$out" | grep -i "error\|mismatch" | head -3; fi >> $OUT/checks.txt; }
one() { local bin=$1 set=$2 op=$3 g=$4; shift 4
  timeout 60 $bin $P/$set/$op.mlir --graph=$G/$g.npy --backend=cuda --no-check "$@" 2>>$R/err.txt |
    python3 -c 'import json,sys
d=json.load(sys.stdin)["cuda"]; print("%.4f" % (d["fwdbwd_median_ms"] if "fwdbwd_median_ms" in d else d["median_ms"]))' 2>>$R/err.txt || echo fail; }
dump() { for g in "$@"; do timeout 60 python3 $P/dump_graph.py $g $D $G/$g.npy >> $R/graphs.txt 2>&1; done; }
# reddit_ab BIN LABEL OP...: reddit-like dumped, then each OP's forward in
# bf16 and f32 by BIN (named LABEL) and by gnn-run ($OUT/reddit.txt).
reddit_ab() { local bin=$1 label=$2; shift 2
  prog reddit-dump
  timeout 90 python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $R/graphs.txt 2>&1
  prog reddit
  for set in gnnc_ops_bf16 gnnc_ops; do for op in "$@"; do
    echo "reddit $set $op fwd $label=$(one $bin $set $op reddit-like --reps=10 --warmup=3) new=$(one gnn-run $set $op reddit-like --reps=10 --warmup=3)" >> $OUT/reddit.txt
  done; done; }
