#!/usr/bin/env bash
# Session 86, call 1 (one GPU), build s85a (2e6e2cd; the library is
# unchanged since): session 85's unrun calls 3 and 2 in one call.
#  1. bench/probes/phased/spmm_phased.cu's phasedBatch on reddit-like
#     (issue 29's f32 SpMM >= 1.5x cuSPARSE), each configuration also in
#     one phase.
#  2. Small graphs, bf16 spmm: gnn-run's event time with the heavy-row
#     split forced (--split) on cora, citeseer and pubmed, and each step's time.
#  3. Both op-level scoreboards (bench/scoreboard_both.sh).
#  4. bench/gine.py, model and layer (issue 31's GINE point).
set -u
S0=$(date +%s)
LIMIT=${LIMIT:-580}
left() { echo $(( LIMIT - ($(date +%s) - S0) )); }
mkdir -p .carry/bin .carry/py312
cp .carry/s85a/gnn-run.xz .carry/bin/gnn-run.xz
xz -dc .carry/s85a/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
xz -dc .carry/s85a/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
A=$R/all.txt
P0=.carry/peers
t phased
nvcc -O3 -arch=sm_90 bench/probes/phased/spmm_phased.cu -lcusparse -o /tmp/spmm_phased >> $A 2>&1
timeout 60 python3 bench/probes/l2hot/gen.py $P0 reddit-like /tmp/rl $D >> $A 2>&1
timeout 75 /tmp/spmm_phased /tmp/rl 10 4096 >> $A 2>&1; echo "phased rc $?" >> $A
rm -rf /tmp/rl
t small
RUN=.carry/bin/gnn-run; P=$P0/gnnc_ops_bf16
for s in -1 0 32 64; do
  for g in $D/cora $D/citeseer $D/pubmed; do
    for op in spmm_unweighted spmm_sum; do
      [ $(( $(date +%s) - S0 )) -gt 150 -o $(left) -lt 30 ] && break
      timeout 15 $RUN $P/$op.mlir --graph=$g --backend=cuda --reps=50 --warmup=10 --no-check --split=$s --profile-steps > /tmp/j 2>/tmp/j.err
      python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('split $s $(basename $g) $op bf16 median', c['median_ms'], 'min', c['min_ms'], 'steps', [(x['step'], round(x['median_ms'],4)) for x in c.get('step_ms', [])])" >> $A 2>&1 || tail -2 /tmp/j.err >> $A
    done
  done
done
t scoreboard
[ $(left) -gt 340 ] && timeout 330 bash bench/scoreboard_both.sh .carry /tmp/sb
cp /tmp/sb/tables.md /tmp/sb/out.tgz "$R"/ 2>/dev/null
grep -E "^forward|^##" /tmp/sb/tables.md >> $A 2>/dev/null
t gine
for i in 1 2; do
  for kind in "" "--layer-only"; do
    [ $(left) -lt 35 ] && break
    echo "== gine $kind round $i" >> $A
    timeout 35 python3 bench/gine.py "$D/qm9" --batch 4096 $kind 2>&1 | tail -4 >> $A
  done
done
t done
cat $A
