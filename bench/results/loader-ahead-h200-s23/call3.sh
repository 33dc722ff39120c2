source bench/gpu_setup.sh .carry "$OUT"
GNNC_TEST_DEVICE=cuda timeout 120 python -m pytest -q -p no:cacheprovider python/tests/test_loader.py -k "ahead or cuda" > $R/tests.txt 2>&1
tail -3 $R/tests.txt
timeout 400 python bench/probes/loader/host_profile.py > $R/host.txt 2>&1
grep "====" $R/host.txt
