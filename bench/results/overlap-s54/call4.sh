#!/usr/bin/env bash
# Session 54, call 4 (one GPU): compute-sanitizer memcheck and racecheck over
# the split kernels now that the light-row kernel runs beside the partial and
# final ones (test/Integration/sanitize.sh on musae-github, whose hub rows are
# split, short and long chunks, f32 and bf16), as far as the call's time goes.
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
export PATH=/usr/local/cuda/bin:/tmp/bin:$PATH GNNC_CACHE_DIR=/tmp/gk
mkdir -p -m 700 /tmp/gk "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$OUT/device.txt"
TOOLS="memcheck racecheck" CHUNKS="8192 4" TYPES="f32 bf16" CASES="${CASES:-spmm|gat|attention}" \
  timeout 200 bash test/Integration/sanitize.sh /tmp/bin/gnn-run .carry/datasets musae-github /tmp/bin/gnn-opt \
  > "$OUT/sanitize.txt" 2>&1
echo "rc=$?" >> "$OUT/sanitize.txt"
