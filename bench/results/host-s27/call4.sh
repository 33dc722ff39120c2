#!/usr/bin/env bash
# Session 27, call 4 (HEAD 955c903's module, .carry/py312-A): every
# gnnc.nn case of test_nn.py fed a view that starts 4 bytes off a 16-byte
# boundary (bench/probes/align/views.py), then issue 28's JIT latency
# acceptance: cold start to the end of the first GAT step on Cora, and 40
# sampled-subgraph steps on musae-github and on blogcatalog.
set -u
source bench/gpu_setup.sh .carry "$OUT"
cp $B/py312-A/_gnnc*.so /tmp/pkg/gnnc/
t align
timeout 300 python3 bench/probes/align/views.py > $R/align.txt 2>&1; tail -30 $R/align.txt
t cold
timeout 120 python3 bench/jit_latency.py cold --repeat 2 > $R/cold.txt 2>&1; tail -8 $R/cold.txt
t sampled
for g in musae-github blogcatalog; do
  echo "== $g" >> $R/sampled.txt
  timeout 120 python3 bench/jit_latency.py sampled --graph $D/$g >> $R/sampled.txt 2>&1
done
tail -30 $R/sampled.txt
t end
