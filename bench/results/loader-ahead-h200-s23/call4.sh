source bench/gpu_setup.sh .carry "$OUT"
timeout 330 python bench/probes/loader/prebuild.py > $R/prebuild.txt 2>&1
grep -A8 "== medians" $R/prebuild.txt; grep "== profile" $R/prebuild.txt
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider python/tests/test_loader.py python/tests/test_core.py python/tests/test_nn_cuda.py -k "loader or ahead or stream or cache or stale or graph or sage" > $R/tests.txt 2>&1
tail -3 $R/tests.txt
