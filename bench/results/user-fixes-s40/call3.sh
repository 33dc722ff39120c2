#!/usr/bin/env bash
# Call 3: the CUDA test files call 2 did not reach in its time (it stopped
# at 45 %, in test_autocast.py, with no failure), then the per-layer
# forward+backward against PyG on pubmed (issue 28's table, the rest of
# call 2's cut-off run).
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 330 python3 -m pytest -q -p no:cacheprovider --maxfail=30 \
  test_nn.py test_autocast.py test_gcn_model.py test_message_passing.py test_mp_layers.py \
  > $R/pytest.txt 2>&1); tail -3 $R/pytest.txt
t layers
PYTHONPATH=/tmp/pkg timeout 100 python3 bench/nn_layers.py --datasets $D --graphs pubmed --parts speed --reps 20 > $R/layers-B.txt 2>&1
t done
