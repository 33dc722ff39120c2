source bench/gpu_setup.sh .carry "$OUT"
t tests
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider -x python/tests/test_loader.py python/tests/test_core.py > $R/tests.txt 2>&1
tail -3 $R/tests.txt
t probe
timeout 330 python bench/probes/loader/prebuild.py > $R/prebuild.txt 2>&1
grep -A8 "== medians" $R/prebuild.txt; grep "== profile" $R/prebuild.txt
