#!/usr/bin/env bash
# Session 82, call 2 (one GPU): the committed narrow kernel (.carry/new: the
# narrow rows staged 512 values at a time): runtime gtests, every example's
# training step against the reference on pubmed and cora plus GINE; then the
# fp32 op scoreboard (peers fp32, gnnc forward checked against the
# reference, gnnc --grad), tables by side_by_side.py; then an Nsight Compute
# look at GINE's backward kernels if time is left.
set -u
S0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/new/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in base new; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
t gtest
xz -dc .carry/new/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 120 /tmp/rt > /tmp/rt.txt 2>&1; echo "rc $?" >> $R/tests.txt
grep -E "PASSED|FAILED|tests ran|RowSplitIsPrecise" /tmp/rt.txt >> $R/tests.txt
t refs
for e in gcn gcn3 gin gat gatv2 agnn transformer sage_mean sage_max; do
  for g in pubmed cora; do
    timeout 60 /tmp/run-new examples/$e.mlir --graph=$D/$g --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$e $g match', c.get('match'))" >> $R/refs.txt 2>&1 || { echo "$e $g failed"; tail -3 /tmp/j.err; } >> $R/refs.txt
  done
done
timeout 60 /tmp/run-new .carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('gine qm9b4096 match', c.get('match'))" >> $R/refs.txt 2>&1 || tail -3 /tmp/j.err >> $R/refs.txt
grep -c "match True" $R/refs.txt >> $R/refs.txt
P=.carry/peers; G=/tmp/graphs; W=$R/w; mkdir -p $G $W
t dump
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $W/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $W/log.txt 2>&1
t peers
timeout 150 python3 $P/ops_bench.py --graphs pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096 --impls cusparse,turbo-gnn --dtype float32 --datasets $D > $W/peers-fp32.jsonl 2>> $W/log.txt
small="$G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/qm9-batch4096.npy"
t fwd
timeout 100 bash $P/gnnc_ops.sh /tmp/run-new $small > $W/gnnc-fwd.jsonl 2>> $W/log.txt
GNNC_OPS_FLAGS="--no-check" timeout 40 bash $P/gnnc_ops.sh /tmp/run-new $G/arxiv-like.npy >> $W/gnnc-fwd.jsonl 2>> $W/log.txt
echo "## fp32 forward (peer / gnnc)" >> $R/tables.md
python3 $P/side_by_side.py $W/gnnc-fwd.jsonl $W/peers-fp32.jsonl >> $R/tables.md 2>&1
t grad
GNNC_OPS_FLAGS="--grad --no-check" timeout 100 bash $P/gnnc_ops.sh /tmp/run-new $small $G/arxiv-like.npy > $W/gnnc-grad.jsonl 2>> $W/log.txt
echo "## fp32 forward+backward (peer / gnnc)" >> $R/tables.md
python3 $P/side_by_side.py $W/gnnc-grad.jsonl $W/peers-fp32.jsonl >> $R/tables.md 2>&1
t ab
# gcn3's first weight gradient (16 input channels: the narrow kernel with
# N = 16, narrow A) and GINE, base against new, alternating.
for gr in "powerlaw:nodes=1000000,edges=10000000,seed=3" "$D/pubmed"; do
  for v in base new base new; do
    [ $(left) -lt 90 ] && break
    timeout 60 /tmp/run-$v examples/gcn3.mlir --graph=$gr --grad --backend=cuda --reps=20 --warmup=3 --no-check > /tmp/j 2>&1
    python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gcn3 ${gr##*/} fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'])" >> $R/ab.txt 2>&1 || tail -2 /tmp/j >> $R/ab.txt
  done
done
timeout 60 /tmp/run-new examples/gcn3.mlir --graph=powerlaw:nodes=1000000,edges=10000000,seed=3 --grad --backend=cuda --reps=5 --warmup=1 --no-check --profile-steps > $R/gcn3-profile-new.json 2>&1
timeout 60 /tmp/run-base examples/gcn3.mlir --graph=powerlaw:nodes=1000000,edges=10000000,seed=3 --grad --backend=cuda --reps=5 --warmup=1 --no-check --profile-steps > $R/gcn3-profile-base.json 2>&1
t ncu
if [ $(left) -gt 60 ]; then
  timeout $(( $(left) - 20 )) ncu --graph-profiling node --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
    /tmp/run-new .carry/gine_layer.mlir --graph=.carry/qm9b4096 --grad --backend=cuda --reps=1 --warmup=0 --no-check > $R/ncu.txt 2>&1
  echo "ncu rc $?" >> $R/ncu.txt
fi
t end
cat $R/tests.txt $R/ab.txt; tail -1 $R/refs.txt; grep -v "match True" $R/refs.txt | head; cat $R/tables.md
