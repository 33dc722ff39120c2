#!/usr/bin/env bash
# Session 65, call 4 (the same H100, warm; run inline as the `run`
# command): racecheck at 4 chunks (call 1 reached only chunks of 8,192),
# f32 then bf16 then f16, as far as 200 s go.
mkdir -p /tmp/bin
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
source bench/gpu_setup.sh .carry $OUT >/dev/null 2>&1
TOOLS=racecheck CHUNKS="4" TYPES="f32 bf16 f16" timeout 200 bash test/Integration/sanitize.sh \
  /tmp/bin/gnn-run "$D" musae-github /tmp/bin/gnn-opt > $OUT/racecheck4.txt 2>&1
