#!/usr/bin/env bash
# Session 56, the steps calls 1-3 share (sourced by call1.sh and
# call2-3.sh after they unpack gnn-run and gnn-run-old into /tmp/bin):
# the scoreboard graphs, spmm max and SAGE max --grad against the reference
# in bf16 and f16 (checks.txt), and the A/B of the bf16 max --grad against
# HEAD's binary, two rounds, with f32 (time.txt). (Factored out of the
# calls' scripts after they ran; the steps are the ones they ran.)
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry /tmp/r
mkdir -p /tmp/g
t graphs
for g in pubmed musae-github blogcatalog qm9-batch4096 arxiv-like; do
  python3 .carry/peers/dump_graph.py $g $D /tmp/g/$g.npy >> $R/graphs.txt 2>&1
done
t checks
W=/tmp/ops; mkdir -p $W
for ty in bf16 f16; do
  sed -e "s/f32/$ty/g" test/Integration/Inputs/half_ops.mlir > $W/ops-$ty.mlir
  sed -e "s/f32/$ty/g" examples/sage_max.mlir > $W/sage_max-$ty.mlir
done
chk() { local what=$1; shift
  out=$("$@" --backend=cuda --grad --reps=3 --warmup=1 2>&1); rc=$?
  ratio=$(printf '%s\n' "$out" | sed -n 's/.*"worst_ratio_to_tolerance": \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
  if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '"match": true' && ! printf '%s' "$out" | grep -q '"match": false'; then
    echo "PASS $what $ratio"; else echo "FAIL $what rc=$rc $ratio"; printf '%s\n' "$out" | grep -i error | head -3; fi >> $R/checks.txt; }
for ty in bf16 f16; do
  for spec in $D/cora "powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2" "batch:graphs=40,min=5,max=30,seed=2"; do
    chk "spmm_max $ty $spec" gnn-run $W/ops-$ty.mlir --function=spmm_max --graph=$spec
    chk "sage_max $ty $spec" gnn-run $W/sage_max-$ty.mlir --graph=$spec
  done
  chk "spmm_max $ty powerlaw chunks=4" gnn-run $W/ops-$ty.mlir --function=spmm_max --graph="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2" --max-chunks=4
  chk "spmm_max $ty powerlaw split=32" gnn-run $W/ops-$ty.mlir --function=spmm_max --graph="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2" --split=32
done
for g in pubmed musae-github blogcatalog qm9-batch4096; do
  chk "scoreboard max bf16 $g" gnn-run .carry/peers/gnnc_ops_bf16/max.mlir --graph=/tmp/g/$g.npy
done
cat $R/checks.txt
t timing
one() { local bin=$1 set=$2 g=$3; shift 3
  $bin .carry/peers/$set/max.mlir --graph=/tmp/g/$g.npy --backend=cuda --no-check --reps=50 --warmup=10 --grad "$@" 2>>$R/err.txt |
    python3 -c 'import json,sys
d=json.load(sys.stdin)["cuda"]; print("%.4f" % d["fwdbwd_median_ms"])' 2>>$R/err.txt || echo fail; }
for g in pubmed musae-github blogcatalog qm9-batch4096 arxiv-like; do
  echo "$g bf16 old=$(one gnn-run-old gnnc_ops_bf16 $g) new=$(one gnn-run gnnc_ops_bf16 $g) old=$(one gnn-run-old gnnc_ops_bf16 $g) new=$(one gnn-run gnnc_ops_bf16 $g) f32-new=$(one gnn-run gnnc_ops $g)" >> $R/time.txt
done
cat $R/time.txt
