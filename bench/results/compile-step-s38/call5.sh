#!/usr/bin/env bash
# Call 5: the gnnc.MessagePassing size fix (d3bc19f) on CUDA.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
cd python/tests && GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider \
  test_message_passing.py test_mp_layers.py > $R/pytest.txt 2>&1; cd ../..
t done
