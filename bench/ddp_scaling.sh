#!/usr/bin/env bash
# Issue 30's DDP figures, in one call on a GPU machine with N >= 2 GPUs:
#   bench/ddp_scaling.sh CARRY OUT
# CARRY holds py312/_gnnc*.so (bench/gpu_setup.sh); OUT receives, for the
# reddit-like graph (synthetic:232965:114615892:128:41, 65% of the nodes as
# seeds) and examples/python/train_ddp.py's 2-layer GraphSAGE-mean (256
# hidden, fan-out [25, 10]):
#   throughput-<n>gpu.txt  batch 1024 per rank on n = 1, 2, ... NGPUS GPUs
#                          (seeds/s per epoch; the scaling is the ratio of
#                          the median epochs' seeds/s)
#   loss-1gpu-s<S>.txt     one GPU, batch 1024 * NGPUS (seeds S = 0, 1, 2)
#   loss-<N>gpu-s<S>.txt   NGPUS GPUs, batch 1024 each: the same global batch,
#                          so its loss curve is compared with the one-GPU
#                          runs' seed-to-seed spread
#   gat-<N>gpu.txt         GAT (4 heads) under DDP on NGPUS GPUs, 3 epochs
# train_ddp.py wraps the model with --ddp static (its default); DDP=default
# runs DDP's defaults instead.
# Every rank holds the graph and features on its device; the ranks share
# one kernel cache directory (GNNC_CACHE_DIR).
set -u
source bench/gpu_setup.sh "$1" "$2"
NGPUS=${NGPUS:-$(nvidia-smi -L | wc -l)}
G=synthetic:232965:114615892:128:41
EPOCHS=${EPOCHS:-8}
DDP=${DDP:-static}
run() { # ranks, output, train_ddp.py arguments...
  local n=$1 out=$2; shift 2
  set -- --ddp "$DDP" "$@"
  if [ "$n" = 1 ]; then
    timeout 300 python3 examples/python/train_ddp.py --graph $G "$@" > "$R/$out" 2>&1
  else
    timeout 300 python3 -m torch.distributed.run --standalone --nproc_per_node="$n" \
      examples/python/train_ddp.py --graph $G "$@" > "$R/$out" 2>&1
  fi
  echo "exit $?" >> "$R/$out"
}
for n in $(seq 1 "$NGPUS"); do
  t "throughput $n"
  run "$n" "throughput-${n}gpu.txt" --epochs "$EPOCHS" --batch-size 1024
done
for s in 0 1 2; do
  t "loss seed $s"
  run 1 "loss-1gpu-s$s.txt" --epochs "$EPOCHS" --batch-size $((1024 * NGPUS)) --seed "$s"
  run "$NGPUS" "loss-${NGPUS}gpu-s$s.txt" --epochs "$EPOCHS" --batch-size 1024 --seed "$s"
done
t "gat"
run "$NGPUS" "gat-${NGPUS}gpu.txt" --model gat --epochs 3 --batch-size 1024
t "done"
