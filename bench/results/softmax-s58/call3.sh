#!/usr/bin/env bash
# Session 58, call 3 (one GPU, the last of the session's device time): the
# final rule (blocks of 64 for attention from a mean degree of 4 on, for
# aggregations from 8 on; else 256) against call 2's binary (blocks of 64
# for every row kind, gnn-run-b64) where they differ (pubmed's
# aggregations, qm9-batch4096's row kernels), then the final binary's
# checks: run-half.sh, run-nan.sh and the scoreboard functions --grad on a
# power-law graph with a split (checks.txt).
source bench/results/softmax-s58/common.sh gnn-run gnn-run-b64
dump pubmed qm9-batch4096
prog ab
for case in "gnnc_ops spmm_sum pubmed" "gnnc_ops_bf16 max pubmed" "gnnc_ops spmm_sum qm9-batch4096" "gnnc_ops gatv2 qm9-batch4096" "gnnc_ops_bf16 gatv2 qm9-batch4096"; do
  set -- $case
  echo "$3 $1 $2 fwd b64=$(one gnn-run-b64 $1 $2 $3 --reps=30 --warmup=5) new=$(one gnn-run $1 $2 $3 --reps=30 --warmup=5) b64=$(one gnn-run-b64 $1 $2 $3 --reps=30 --warmup=5) new=$(one gnn-run $1 $2 $3 --reps=30 --warmup=5)" >> $OUT/ab.txt
done
echo "pubmed gnnc_ops_bf16 gatv2 grad b64=$(one gnn-run-b64 gnnc_ops_bf16 gatv2 pubmed --reps=20 --warmup=3 --grad) new=$(one gnn-run gnnc_ops_bf16 gatv2 pubmed --reps=20 --warmup=3 --grad)" >> $OUT/ab.txt
prog checks
for set in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum max gatv2 gt; do
  chk "$set $op --grad powerlaw split=32 chunks=4" gnn-run $P/$set/$op.mlir --graph=$PL --split=32 --max-chunks=4 --grad
done; done
prog nan
timeout 60 bash test/Integration/run-nan.sh /tmp/bin/gnn-run > $R/nan.txt 2>&1; echo "run-nan: $(tail -1 $R/nan.txt)" >> $OUT/checks.txt
prog half
timeout 150 bash test/Integration/run-half.sh /tmp/bin/gnn-run $D > $R/half.txt 2>&1; echo "run-half: $(tail -1 $R/half.txt)" >> $OUT/checks.txt
grep -i "fail" $R/nan.txt $R/half.txt | head -20 >> $OUT/checks.txt
prog done
