#!/usr/bin/env bash
# Session 22 call 6: long rows' ties walked a lane per element (the team's
# edges one after the other) instead of a lane per edge and one tie element
# at a time. Checks (max --grad against the reference, bf16 and f32, on
# the four small graphs; CUDA tests of extrema; memcheck on spmm_max and
# SAGE-max's backward), then prev (9a1164f) against new, max --grad.
set -u
for v in gnn-run gnn-run-prev gnn-opt; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; C=/tmp/chk; mkdir -p $G $C
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
t checks
export B P G C
( for g in pubmed musae-github blogcatalog qm9-batch4096; do for s in gnnc_ops gnnc_ops_bf16; do echo "$s $g"; done; done ) | xargs -P 8 -L 1 bash -c 'timeout 100 $B/bin/gnn-run $P/$0/max.mlir --graph=$G/$1.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.json 2>&1; echo "$0 $1 rc=$? $(grep -o "\"match\": [a-z]*" $C/$0.$1.json | sort | uniq -c | tr "\n" " ")"' > $R/checks.txt &
j1=$!
( GNNC_TEST_DEVICE=cuda timeout 150 python -m pytest -q -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py -k "max or extremum or tie or min" > /tmp/py.txt 2>&1; echo "rc=$?" >> /tmp/py.txt ) &
j2=$!
( TOOLS=memcheck TYPES="f32 bf16" CHUNKS=8192 CASES="spmm_max|sage_max" timeout 150 bash test/Integration/sanitize.sh $B/bin/gnn-run $D musae-github $B/bin/gnn-opt > /tmp/san.txt 2>&1 ) &
j3=$!
wait $j1 $j2 $j3
{ echo "== pytest"; tail -2 /tmp/py.txt; echo "== memcheck"; cat /tmp/san.txt | tail -12; } >> $R/checks.txt
t ab
for round in 1 2; do for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do for s in gnnc_ops_bf16 gnnc_ops; do for bin in gnn-run-prev gnn-run; do
  timeout 30 $B/bin/$bin $P/$s/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 -c "
import json,sys
c=json.load(open('/tmp/a.json'))['cuda']; print(json.dumps({'round': $round, 'bin': '$bin', 'set': '$s', 'graph': '$g', 'fwdbwd_ms': c.get('fwdbwd_median_ms'), 'bwd_ms': c['bwd'].get('median_ms')}))" >> $R/ab.jsonl 2>>$R/log.txt
done; done; done; done
t done
