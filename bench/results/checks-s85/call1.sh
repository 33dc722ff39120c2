#!/usr/bin/env bash
# Session 85, call 1 (one GPU), build s85a (2e6e2cd, the session's base).
#  1. bench/probes/phased/spmm_phased.cu on reddit-like (issue 29's f32
#     SpMM >= 1.5x cuSPARSE): a block of destination rows walking its
#     sources in phases, against plain and cuSPARSE; gnnc's own spmm_sum
#     there (gnn-run --no-check).
#  2. Where a small graph's bf16 forward goes: each op's kernels under ncu
#     (no clock control) beside gnn-run's event time and per-step times,
#     on cora, pubmed and musae-github.
#  3. bench/gine.py, model and layer, alternating (issue 31's GINE point).
set -u
S0=$(date +%s)
LIMIT=${LIMIT:-570}
left() { echo $(( LIMIT - ($(date +%s) - S0) )); }
mkdir -p .carry/bin .carry/py312
xz -dc .carry/s85a/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
xz -dc .carry/s85a/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
A=$R/all.txt
P0=.carry/peers; G=/tmp/graphs; mkdir -p $G
t phased
nvcc -O3 -arch=sm_90 bench/probes/phased/spmm_phased.cu -lcusparse -o /tmp/spmm_phased >> $A 2>&1
timeout 90 python3 bench/probes/l2hot/gen.py $P0 reddit-like /tmp/rl $D >> $A 2>&1
timeout 150 /tmp/spmm_phased /tmp/rl 10 4096 >> $A 2>&1; echo "phased rc $?" >> $A
rm -rf /tmp/rl
t reddit
timeout 90 python3 $P0/dump_graph.py reddit-like $D $G/rl.npy > /dev/null 2>&1
timeout 120 .carry/bin/gnn-run $P0/gnnc_ops/spmm_sum.mlir --graph=$G/rl.npy --backend=cuda --no-check \
  --reps=10 --warmup=3 > /tmp/o.json 2> /tmp/o.err
python3 -c "import json; print('gnnc f32 spmm_sum reddit-like median ms', json.load(open('/tmp/o.json'))['cuda']['median_ms'])" >> $A 2>&1 || tail -3 /tmp/o.err >> $A
rm -f $G/rl.npy
t dump
for g in pubmed musae-github; do timeout 60 python3 $P0/dump_graph.py $g $D $G/$g.npy; done > /tmp/dump.log 2>&1
RUN=.carry/bin/gnn-run
P=.carry/peers/gnnc_ops_bf16
t ncu
for g in $D/cora $G/pubmed.npy $G/musae-github.npy; do
  for op in spmm_sum spmm_unweighted max gatv2 gt; do
    [ $(left) -lt 120 ] && break
    timeout 30 $RUN $P/$op.mlir --graph=$g --backend=cuda --reps=50 --warmup=10 --no-check --profile-steps > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('event $(basename $g) $op whole', c['median_ms'], 'min', c['min_ms'], 'steps', [(s['step'], s['median_ms']) for s in c['step_ms']])" >> $A 2>&1 || tail -2 /tmp/j.err >> $A
    timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum --csv $RUN $P/$op.mlir --graph=$g --backend=cuda --reps=3 --warmup=0 --no-check > /tmp/n.csv 2>/dev/null
    python3 - $(basename $g) $op <<'PY' >> $A 2>&1
import csv, sys, collections
rows = [r for r in csv.reader(open("/tmp/n.csv")) if len(r) > 10]
if not rows:
    print("ncu", *sys.argv[1:], "no rows"); sys.exit()
h = rows[0]; k = h.index("Kernel Name"); v = h.index("Metric Value"); u = h.index("Metric Unit")
d = collections.defaultdict(list)
for r in rows[1:]:
    x = float(r[v].replace(",", "")); x = x / 1000 if r[u] == "nsecond" else x
    d[r[k][:40]].append(x)
print("ncu", *sys.argv[1:], "us (min per kernel):", {n: round(min(x), 2) for n, x in d.items()})
PY
  done
done
t gine
for i in 1 2; do
  for kind in "" "--layer-only"; do
    [ $(left) -lt 40 ] && break
    echo "== gine $kind round $i" >> $A
    timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 $kind 2>&1 | tail -4 >> $A
  done
done
t done
cat $A
