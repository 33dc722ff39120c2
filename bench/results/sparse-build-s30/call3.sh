#!/usr/bin/env bash
# Session 30, call 3: the CUDA pytest of call 2 again (test_hgt's device
# fix; the run had stopped at its time limit inside test_loader); the graph
# build's kernels (both paths: sorted, and targets already sorted) under
# compute-sanitizer memcheck and racecheck through the runtime's graph
# tests; the bf16 kernel families under memcheck and racecheck
# (test/Integration/sanitize.sh TYPES=bf16: the example layers, the fused
# aggregation, each op of half_ops.mlir forward and backward, the max
# backward's walk by edge of session 29 among them; chunks 8192 and 4).
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
xz -dc .carry/bin/gnn-run.xz > /tmp/gr; chmod +x /tmp/gr
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 220 python3 -m pytest -q -p no:cacheprovider -rf \
    test_hgt.py test_loader.py test_bipartite.py test_rgcn.py > $R/pytest-cuda.txt 2>&1
  tail -3 $R/pytest-cuda.txt )
t build-sanitize
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/rt \
    --gtest_filter='GpuGraph.DestinationSortedEdgesSkipTheSort:GpuGraph.EdgeCases:GpuGraph.BatchOfSmallGraphs:GpuGraph.SixtyFourBitIndices' \
    > $R/build-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/build-$tool.txt | tail -1) $(grep -E 'PASSED|FAILED' $R/build-$tool.txt | tail -1)"
done
t sanitize-bf16
TOOLS="memcheck racecheck" TYPES="bf16" timeout 320 bash test/Integration/sanitize.sh /tmp/gr $D musae-github > $R/sanitize-bf16.txt 2>&1
tail -1 $R/sanitize-bf16.txt; grep -c PASS $R/sanitize-bf16.txt; grep FAIL $R/sanitize-bf16.txt | head
t done
