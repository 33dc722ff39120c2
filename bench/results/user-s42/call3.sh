#!/usr/bin/env bash
# Call 3 (the merged code): where a gnnc layer's backward spends its host
# time on the worker thread against the calling thread
# (bench/probes/host/engine_split.py); the whole Python suite on CUDA in 8
# processes (as call 1, skip reasons printed); compute-sanitizer memcheck of
# the backward functions with ReLU selects (the masked-tangent change:
# gcn3, gin, gcn, sage; f32 and bf16); every example's training step
# against the reference (run-autodiff.sh) on pubmed and blogcatalog.
# Outputs: summary.txt, engine.txt, out.tgz.
set -u
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
t engine
timeout 90 python3 bench/probes/host/engine_split.py > $R/engine.txt 2>&1
t pytest
bash bench/cuda_suite.sh $W $S 8 330
t sanitize
(TOOLS="memcheck" CHUNKS="8192" CASES="gcn3|gin|gcn|sage" TYPES="f32 bf16" timeout 150 \
  bash test/Integration/sanitize.sh $B/bin/gnn-run $D musae-github $B/bin/gnn-opt > $W/sanitize.txt 2>&1) &
(timeout 150 bash test/Integration/run-autodiff.sh $B/bin/gnn-opt $B/bin/gnn-run $D pubmed blogcatalog > $W/autodiff.txt 2>&1) &
wait
echo "sanitize: $(tail -1 $W/sanitize.txt)" >> $S; grep -E "FAIL" $W/sanitize.txt | head -10 >> $S
echo "autodiff: $(tail -1 $W/autodiff.txt)" >> $S; grep -E "FAIL" $W/autodiff.txt | head -10 >> $S
t done
cp $R/progress.txt $W/; tar czf $R/out.tgz -C $W .
