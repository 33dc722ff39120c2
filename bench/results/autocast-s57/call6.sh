#!/usr/bin/env bash
# Session 57, call 6 (one GPU): test_autocast.py on CUDA with the
# Transformer and AGNN plans under autocast (the last change).
set -u
source bench/gpu_setup.sh .carry /tmp/r
cat $R/device.txt
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 170 python3 -m pytest -q -p no:cacheprovider \
  test_autocast.py test_nn_plans.py > $R/pytest.txt 2>&1)
tail -1 $R/pytest.txt; grep -E "^FAILED" $R/pytest.txt | head -20
tar czf $OUT/r.tgz -C /tmp r
