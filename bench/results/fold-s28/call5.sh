#!/usr/bin/env bash
# Session 28, call 5: the final tree (GATv2Conv's projections in its
# function too). The whole-layer probe under compute-sanitizer (memcheck,
# racecheck); CUDA pytest of the attention layers; nn_layers for every
# layer (this tree against PyG, one run).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t sanitize
for tool in memcheck racecheck; do
  echo "== $tool" >> $R/sanitize.txt
  timeout 150 compute-sanitizer --tool $tool python3 bench/probes/fold/layers_cuda.py >> $R/sanitize.txt 2>&1
done
grep -E "==|FAIL|passed|ERROR SUMMARY|RACECHECK SUMMARY" $R/sanitize.txt
t pytest
GNNC_TEST_DEVICE=cuda timeout 150 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py python/tests/test_nn.py python/tests/test_autocast.py python/tests/test_bipartite.py -k "gatv2 or GATv2" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
t layers
timeout 170 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --reps 20 > $R/layers.txt 2>&1
tail -12 $R/layers.txt
t end
