#!/usr/bin/env bash
# Session 29 call 3: long rows' ties walked by the team a lane per element (session 22's patch), with the kernel held to 32 registers (launch bounds, 8 blocks of 256 per SM) and the walk's unrolling varied, against HEAD.
# Variants: GNNC_XG_UNROLL (the walk's unrolling) and GNNC_XG_MINB (launch
# bounds' minimum blocks per SM), this call's build only: "U:M".
set -u
for v in gnn-run gnn-run-head gnn-opt; do xz -dc .carry/bin/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT; B=$(realpath .carry); P=$B/peers; D=$B/datasets; G=/tmp/graphs; C=/tmp/chk; mkdir -p $G $C
export GNNC_CACHE_DIR=/tmp/gnnc-kernels; mkdir -p -m 700 $GNNC_CACHE_DIR
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
t() { echo "== $1 $(date +%T)" >> $R/progress.txt; }
t graphs
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
t checks
export P G C
( for m in 4:8 8:0; do for g in pubmed musae-github blogcatalog qm9-batch4096; do for s in gnnc_ops gnnc_ops_bf16; do echo "$m $s $g"; done; done; done ) | xargs -P 8 -L 1 bash -c 'GNNC_XG_UNROLL=${0%:*} GNNC_XG_MINB=${0#*:} timeout 100 /tmp/gnn-run $P/$1/max.mlir --graph=$G/$2.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.$2.json 2>&1; echo "$0 $1 $2 rc=$? $(grep -o "\"match\": [a-z]*" $C/$0.$1.$2.json | sort | uniq -c | tr "\n" " ")"' > $R/checks.txt
t ab
for round in 1 2; do for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do for s in gnnc_ops_bf16 gnnc_ops; do for v in head 8:0 8:8 4:8 2:8; do
  bin=/tmp/gnn-run; [ $v = head ] && bin=/tmp/gnn-run-head
  GNNC_XG_UNROLL=${v%:*} GNNC_XG_MINB=${v#*:} timeout 30 $bin $P/$s/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 -c "
import json
c=json.load(open('/tmp/a.json'))['cuda']; print(json.dumps({'round': $round, 'v': '$v', 'set': '$s', 'graph': '$g', 'fwd_ms': c.get('median_ms'), 'fwdbwd_ms': c.get('fwdbwd_median_ms'), 'bwd_ms': c['bwd'].get('median_ms')}))" >> $R/ab.jsonl 2>>$R/log.txt
done; done; done; done
t memcheck
for m in 4:8; do
  GNNC_XG_UNROLL=${m%:*} GNNC_XG_MINB=${m#*:} TOOLS=memcheck TYPES="f32 bf16" CHUNKS=8192 CASES="spmm_max|sage_max" timeout 100 bash test/Integration/sanitize.sh /tmp/gnn-run $D musae-github /tmp/gnn-opt > /tmp/san.txt 2>&1
  { echo "== memcheck $m"; tail -6 /tmp/san.txt; } >> $R/checks.txt
done
t done
