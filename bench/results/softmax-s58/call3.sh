#!/usr/bin/env bash
# Session 58, call 3 (one GPU, the last of the session's device time): the
# final rule (blocks of 64 for attention from a mean degree of 4 on, for
# aggregations from 8 on; else 256) against call 2's binary (blocks of 64
# for every row kind, gnn-run-b64) where they differ (pubmed's
# aggregations, qm9-batch4096's row kernels), then the final binary's
# checks: run-half.sh, run-nan.sh and the scoreboard functions --grad on a
# power-law graph with a split (checks.txt).
set -u
mkdir -p /tmp/bin
for b in gnn-run gnn-run-b64; do xz -dc .carry/bin/$b.xz > /tmp/bin/$b; chmod +x /tmp/bin/$b; done
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry /tmp/r 2>/dev/null
P=.carry/peers; G=/tmp/g; mkdir -p $G
prog() { echo "== $1 $(date +%T)" >> $OUT/progress.txt; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/device.txt
for g in pubmed qm9-batch4096; do timeout 60 python3 $P/dump_graph.py $g $D $G/$g.npy >> $R/graphs.txt 2>&1; done
prog ab
one() { local bin=$1 set=$2 op=$3 g=$4; shift 4
  timeout 60 $bin $P/$set/$op.mlir --graph=$G/$g.npy --backend=cuda --no-check "$@" 2>>$R/err.txt |
    python3 -c 'import json,sys
d=json.load(sys.stdin)["cuda"]; print("%.4f" % (d["fwdbwd_median_ms"] if "fwdbwd_median_ms" in d else d["median_ms"]))' 2>>$R/err.txt || echo fail; }
for case in "gnnc_ops spmm_sum pubmed" "gnnc_ops_bf16 max pubmed" "gnnc_ops spmm_sum qm9-batch4096" "gnnc_ops gatv2 qm9-batch4096" "gnnc_ops_bf16 gatv2 qm9-batch4096"; do
  set -- $case
  echo "$3 $1 $2 fwd b64=$(one gnn-run-b64 $1 $2 $3 --reps=30 --warmup=5) new=$(one gnn-run $1 $2 $3 --reps=30 --warmup=5) b64=$(one gnn-run-b64 $1 $2 $3 --reps=30 --warmup=5) new=$(one gnn-run $1 $2 $3 --reps=30 --warmup=5)" >> $OUT/ab.txt
done
echo "pubmed gnnc_ops_bf16 gatv2 grad b64=$(one gnn-run-b64 gnnc_ops_bf16 gatv2 pubmed --reps=20 --warmup=3 --grad) new=$(one gnn-run gnnc_ops_bf16 gatv2 pubmed --reps=20 --warmup=3 --grad)" >> $OUT/ab.txt
prog checks
chk() { local what=$1; shift
  out=$(timeout 60 "$@" --backend=cuda --reps=2 --warmup=1 2>&1); rc=$?
  if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '"match": true' && ! printf '%s' "$out" | grep -q '"match": false'; then
    echo "PASS $what"; else echo "FAIL $what rc=$rc"; printf '%s\n' "$out" | grep -i "error\|mismatch" | head -3; fi >> $OUT/checks.txt; }
PL="powerlaw:nodes=4000,edges=100000,seed=1,alpha=1.2"
for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum max gatv2 gt; do
  chk "$set $op --grad powerlaw split=32 chunks=4" gnn-run $P/$set/$op.mlir --graph=$PL --split=32 --max-chunks=4 --grad
done; done
prog nan
timeout 60 bash test/Integration/run-nan.sh /tmp/bin/gnn-run > $R/nan.txt 2>&1; echo "run-nan: $(tail -1 $R/nan.txt)" >> $OUT/checks.txt
prog half
timeout 150 bash test/Integration/run-half.sh /tmp/bin/gnn-run $D > $R/half.txt 2>&1; echo "run-half: $(tail -1 $R/half.txt)" >> $OUT/checks.txt
grep -i "fail" $R/nan.txt $R/half.txt | head -20 >> $OUT/checks.txt
prog done
