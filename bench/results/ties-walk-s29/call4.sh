#!/usr/bin/env bash
# Session 29 call 4: every kernel of the max training step (forward with
# winner codes, backward) by ncu, HEAD's gnn-run, bf16 and f32, three graphs.
set -u
for v in gnn-run-head; do xz -dc .carry/bin/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT; B=$(realpath .carry); P=$B/peers; D=$B/datasets; G=/tmp/graphs; mkdir -p $G
export GNNC_CACHE_DIR=/tmp/gnnc-kernels; mkdir -p -m 700 $GNNC_CACHE_DIR
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
for g in musae-github blogcatalog arxiv-like; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
for g in arxiv-like musae-github blogcatalog; do for s in gnnc_ops_bf16 gnnc_ops; do
  echo "## $g $s" >> $R/ncu.txt
  timeout 100 ncu --csv --metrics gpu__time_duration.sum,dram__bytes.sum \
    /tmp/gnn-run-head $P/$s/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=1 --warmup=0 2>>$R/log.txt \
    | grep -E '^"[0-9]' | awk -F'","' '{print $5, $(NF-2), $(NF)}' >> $R/ncu.txt
done; done
