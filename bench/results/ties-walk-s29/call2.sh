#!/usr/bin/env bash
# Session 29 call 2: where the bf16 max backward's time goes. ncu on the
# backward's kernels (HEAD's paths, GNNC_XG_WALK=0:0) with parts of
# extremum_grad switched off by GNNC_XG_DIAG (this call's build only; the
# gradients are then wrong, the times tell the parts' cost): 1 no edge
# blocks (long rows' ties), 2 no short-row tie walks, 4 no winner adds.
set -u
for v in gnn-run; do xz -dc .carry/bin/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT; B=$(realpath .carry); P=$B/peers; D=$B/datasets; G=/tmp/graphs; mkdir -p $G
export GNNC_CACHE_DIR=/tmp/gnnc-kernels; mkdir -p -m 700 $GNNC_CACHE_DIR
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
for g in musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
for g in arxiv-like musae-github blogcatalog qm9-batch4096; do for s in gnnc_ops_bf16 gnnc_ops; do for d in 0 1 2 4 3 7; do
  echo "## $g $s diag=$d" >> $R/ncu.txt
  GNNC_XG_WALK=0:0 GNNC_XG_DIAG=$d timeout 60 ncu --csv --metrics gpu__time_duration.sum,dram__bytes.sum,lts__t_sectors.sum,lts__t_sectors_op_red.sum \
    -k regex:"extremum|generic|max" /tmp/gnn-run $P/$s/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=1 --warmup=0 2>>$R/log.txt \
    | grep -E '^"[0-9]' | awk -F'","' '{print $5, $(NF-2), $(NF)}' >> $R/ncu.txt
done; done; done
