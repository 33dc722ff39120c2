#!/usr/bin/env bash
# Session 29 call 6: the bf16 max forward with winner codes (the training
# forward). Its lanes carry 8 extrema and 8 codes each (16-byte vectors of 8
# bf16): 48 registers against f32's 31. Variants of this call's build only:
# GNNC_XG_WVEC=4 (vectors of 4 for bf16 spmm/reduce with codes: 32
# registers), GNNC_XG_WMINB=6 (launch bounds' minimum blocks on those
# kernels). --grad on the four small graphs against the reference, then
# the training step's times, two rounds.
set -u
for v in gnn-run-x; do xz -dc .carry/bin/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT; B=$(realpath .carry); P=$B/peers; D=$B/datasets; G=/tmp/graphs; C=/tmp/chk; mkdir -p $G $C
export GNNC_CACHE_DIR=/tmp/gnnc-kernels; mkdir -p -m 700 $GNNC_CACHE_DIR
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
export P G C
( for m in GNNC_XG_WVEC=4 GNNC_XG_WVEC=2; do for g in pubmed musae-github blogcatalog qm9-batch4096; do echo "$m $g"; done; done ) | xargs -P 8 -L 1 bash -c 'env $0 timeout 100 /tmp/gnn-run-x $P/gnnc_ops_bf16/max.mlir --graph=$G/$1.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.json 2>&1; echo "$0 $1 rc=$? $(grep -o "\"match\": [a-z]*" $C/$0.$1.json | sort | uniq -c | tr "\n" " ")"' > $R/checks.txt
for round in 1 2; do for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do for v in NONE=1 GNNC_XG_WVEC=4 GNNC_XG_WVEC=2 GNNC_XG_WMINB=6; do
  env $v timeout 30 /tmp/gnn-run-x $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 -c "
import json
c=json.load(open('/tmp/a.json'))['cuda']; print(json.dumps({'round': $round, 'v': '$v', 'graph': '$g', 'fwdbwd_ms': c.get('fwdbwd_median_ms'), 'bwd_ms': c['bwd'].get('median_ms')}))" >> $R/ab.jsonl 2>>$R/log.txt
done; done; done
