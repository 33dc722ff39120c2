#!/usr/bin/env bash
# Session 29 call 1: the max backward's short rows walked by the team, every
# element of a slice at once (walkRow), against HEAD's kernel. GNNC_XG_WALK
# (this call's build only) picks the variant: "0:0" HEAD's code paths,
# "1:W" a walk for slices with a tie in rows of at most W edges, "2:W" a
# walk for every slice of rows of at most W edges. Checks first (max --grad
# against the reference, bf16 and f32, four graphs; memcheck), then the
# timings, two rounds.
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
( for m in 1:32 2:32 2:64 1:256; do for g in pubmed musae-github blogcatalog qm9-batch4096; do for s in gnnc_ops gnnc_ops_bf16; do echo "$m $s $g"; done; done; done ) | xargs -P 8 -L 1 bash -c 'GNNC_XG_WALK=$0 timeout 100 /tmp/gnn-run $P/$1/max.mlir --graph=$G/$2.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.$2.json 2>&1; echo "$0 $1 $2 rc=$? $(grep -o "\"match\": [a-z]*" $C/$0.$1.$2.json | sort | uniq -c | tr "\n" " ")"' > $R/checks.txt
t ab
for round in 1 2; do for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do for s in gnnc_ops_bf16 gnnc_ops; do for v in head 0:0 1:32 2:32 2:64 1:256; do
  bin=/tmp/gnn-run; [ $v = head ] && bin=/tmp/gnn-run-head
  GNNC_XG_WALK=$v timeout 30 $bin $P/$s/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 -c "
import json
c=json.load(open('/tmp/a.json'))['cuda']; print(json.dumps({'round': $round, 'v': '$v', 'set': '$s', 'graph': '$g', 'fwd_ms': c.get('median_ms'), 'fwdbwd_ms': c.get('fwdbwd_median_ms'), 'bwd_ms': c['bwd'].get('median_ms')}))" >> $R/ab.jsonl 2>>$R/log.txt
done; done; done; done
t memcheck
for m in 1:256 2:64; do
  GNNC_XG_WALK=$m TOOLS=memcheck TYPES="f32 bf16" CHUNKS=8192 CASES="spmm_max|sage_max" timeout 100 bash test/Integration/sanitize.sh /tmp/gnn-run $D musae-github /tmp/gnn-opt > /tmp/san.txt 2>&1
  { echo "== memcheck $m"; tail -6 /tmp/san.txt; } >> $R/checks.txt
done
t done
