#!/usr/bin/env bash
# Session 85, call 3 (one GPU), build s85a.
#  1. bench/probes/phased/spmm_phased.cu again, now with phasedBatch (a
#     row's edges in the phase loaded 32 at a time, several gathers in
#     flight), each configuration also in one phase.
#  2. Why a small graph's one-kernel spmm takes 26-35 us on cora (call 1)
#     where GATv2's three kernels take 12: ncu's raw kernel durations, and
#     gnn-run's event time with the heavy-row split forced (--split).
set -u
S0=$(date +%s)
LIMIT=${LIMIT:-170}
left() { echo $(( LIMIT - ($(date +%s) - S0) )); }
mkdir -p .carry/bin .carry/py312
xz -dc .carry/s85a/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
xz -dc .carry/s85a/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
A=$R/all.txt
P0=.carry/peers
t phased
nvcc -O3 -arch=sm_90 bench/probes/phased/spmm_phased.cu -lcusparse -o /tmp/spmm_phased >> $A 2>&1
timeout 60 python3 bench/probes/l2hot/gen.py $P0 reddit-like /tmp/rl $D >> $A 2>&1
timeout 80 /tmp/spmm_phased /tmp/rl 10 4096 >> $A 2>&1; echo "phased rc $?" >> $A
t small
RUN=.carry/bin/gnn-run; P=$P0/gnnc_ops_bf16
for op in spmm_unweighted gatv2; do
  [ $(left) -lt 30 ] && break
  timeout 25 ncu --clock-control none --metrics gpu__time_duration.sum --csv $RUN $P/$op.mlir \
    --graph=$D/cora --backend=cuda --reps=3 --warmup=0 --no-check > $R/ncu-cora-$op.csv 2>&1
done
for s in -1 0 32 64; do
  for g in $D/cora $D/pubmed; do
    [ $(left) -lt 10 ] && break
    timeout 15 $RUN $P/spmm_unweighted.mlir --graph=$g --backend=cuda --reps=50 --warmup=10 --no-check --split=$s > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('split $s $(basename $g) spmm_unweighted bf16 median', c['median_ms'], 'min', c['min_ms'])" >> $A 2>&1 || tail -2 /tmp/j.err >> $A
  done
done
t done
cat $A
