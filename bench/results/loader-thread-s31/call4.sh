#!/usr/bin/env bash
# Session 31, call 4 (nvidia-h200-x2): DDP scaling on the reddit-like graph
# with the loader sampling ahead on its thread (prefetch 1, which builds the
# batches' graphs there) against prefetch 0; untrimmed and trimmed. One
# process per GPU (torchrun), 5 epochs each, median after the first.
set -u
source bench/gpu_setup.sh .carry "$OUT"
G=synthetic:232965:114615892:128:41
run() { # ranks prefetch extra name
  if [ "$1" = 1 ]; then
    timeout 120 python3 examples/python/train_ddp.py --graph $G --epochs 5 --prefetch $2 $3 > "$R/$4" 2>&1
  else
    timeout 120 python3 -m torch.distributed.run --standalone --nproc_per_node=$1 \
      examples/python/train_ddp.py --graph $G --epochs 5 --prefetch $2 $3 > "$R/$4" 2>&1
  fi
  echo "exit $?" >> "$R/$4"; echo "== $4 $(grep median "$R/$4")"
}
t runs
run 1 0 "" a-1gpu-p0.txt
run 2 0 "" b-2gpu-p0.txt
run 1 1 "" c-1gpu-p1.txt
run 2 1 "" d-2gpu-p1.txt
run 1 1 --trim e-1gpu-p1t.txt
run 2 1 --trim f-2gpu-p1t.txt
run 2 0 "" g-2gpu-p0.txt
run 1 0 "" h-1gpu-p0.txt
run 2 1 "" i-2gpu-p1.txt
run 1 1 "" j-1gpu-p1.txt
run 2 1 --trim k-2gpu-p1t.txt
run 1 1 --trim l-1gpu-p1t.txt
t done
