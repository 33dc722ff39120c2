#!/usr/bin/env bash
# Call 1: the first merges of session 40 on CUDA (CSR/CSC adjacencies with
# repeated entries, mixed edge-tensor dtypes outside autocast, PyG's
# EdgeIndex, Aggregation modules, the loader's attribute gathering, the
# typed graph's relation check kept per edge-type version), then the CUDA
# tests of the files they touch.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
cd python/tests && GNNC_TEST_DEVICE=cuda timeout 480 python3 -m pytest -q -p no:cacheprovider --maxfail=40 \
  test_typed.py test_autocast.py test_utils.py test_loader.py test_gcn_model.py test_rgcn.py \
  test_models.py test_message_passing.py test_nn.py test_core.py test_half.py > $R/pytest.txt 2>&1; cd ../..
t done
