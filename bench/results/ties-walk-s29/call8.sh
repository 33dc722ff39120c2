#!/usr/bin/env bash
# Session 29 call 8: extremum_grad's element blocks capped (their teams
# striding over the slices) instead of one block per 8 slices: an empty
# grid of 94K blocks took 59 us on arxiv-like (call 2). GNNC_XG_CAP (this
# call's build only): 0 = uncapped (the committed code), else the cap.
set -u
xz -dc .carry/bin/gnn-run-cap.xz > /tmp/gnn-run-cap; chmod +x /tmp/gnn-run-cap
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT; B=$(realpath .carry); P=$B/peers; D=$B/datasets; G=/tmp/graphs; C=/tmp/chk; mkdir -p $G $C
export GNNC_CACHE_DIR=/tmp/gnnc-kernels; mkdir -p -m 700 $GNNC_CACHE_DIR
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
export P G C
( for m in 8192 2048; do for g in pubmed musae-github blogcatalog qm9-batch4096; do for s in gnnc_ops gnnc_ops_bf16; do echo "$m $s $g"; done; done; done ) | xargs -P 8 -L 1 bash -c 'GNNC_XG_CAP=$0 timeout 60 /tmp/gnn-run-cap $P/$1/max.mlir --graph=$G/$2.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.$2.json 2>&1; echo "$0 $1 $2 rc=$? $(grep -o "\"match\": [a-z]*" $C/$0.$1.$2.json | sort | uniq -c | tr "\n" " ")"' > $R/checks.txt
for round in 1 2; do for g in arxiv-like musae-github blogcatalog pubmed qm9-batch4096; do for s in gnnc_ops_bf16 gnnc_ops; do for v in 0 2048 8192 32768; do
  GNNC_XG_CAP=$v timeout 30 /tmp/gnn-run-cap $P/$s/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 -c "
import json
c=json.load(open('/tmp/a.json'))['cuda']; print(json.dumps({'round': $round, 'cap': $v, 'set': '$s', 'graph': '$g', 'fwdbwd_ms': c.get('fwdbwd_median_ms'), 'bwd_ms': c['bwd'].get('median_ms')}))" >> $R/ab.jsonl 2>>$R/log.txt
done; done; done; done
