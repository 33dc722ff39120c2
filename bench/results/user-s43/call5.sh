#!/usr/bin/env bash
# Call 5 (the backward-fusion change: gradient terms without zeros to start
# from, gnn-fuse-elementwise): the whole Python suite on CUDA in 8
# processes; every example's training step against the reference
# (run-autodiff.sh) on pubmed, blogcatalog and qm9; compute-sanitizer
# memcheck of the backward functions whose kernels changed (gcn3, gin, gcn,
# agnn; f32 and bf16). Outputs: summary.txt, out.tgz.
set -u
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
t pytest
bash bench/cuda_suite.sh $W $S 8 330
t sanitize
(TOOLS="memcheck" CHUNKS="8192" CASES="gcn3|gin|gcn|agnn" TYPES="f32 bf16" timeout 150 \
  bash test/Integration/sanitize.sh $B/bin/gnn-run $D musae-github $B/bin/gnn-opt > $W/sanitize.txt 2>&1) &
(timeout 150 bash test/Integration/run-autodiff.sh $B/bin/gnn-opt $B/bin/gnn-run $D pubmed blogcatalog qm9 > $W/autodiff.txt 2>&1) &
wait
echo "sanitize: $(tail -1 $W/sanitize.txt)" >> $S; grep -E "FAIL" $W/sanitize.txt | head -10 >> $S
echo "autodiff: $(tail -1 $W/autodiff.txt)" >> $S; grep -E "FAIL" $W/autodiff.txt | head -10 >> $S
t done
cp $R/progress.txt $W/; tar czf $R/out.tgz -C $W .
