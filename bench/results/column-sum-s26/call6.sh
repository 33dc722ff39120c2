#!/usr/bin/env bash
# Session 26, call 6: SAGE's bias in the first GEMM's epilogue (cuBLASLt)
# instead of a broadcast kernel. The runtime's GPU tests (GemmBias against
# a double product), the CUDA pytest of SAGE, then large.py's SAGE profile
# and the reddit-like sampled SAGE epoch, HEAD 55f29a9 (A) against this
# tree (B).
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
xz -dc .carry/bin/rt.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 60 /tmp/rt --gtest_filter='GpuLibrary.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
t pytest
GNNC_TEST_DEVICE=cuda timeout 120 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_autocast.py python/tests/test_bipartite.py -k "sage or SAGE" > $R/pytest.txt 2>&1
tail -2 $R/pytest.txt
t large
for s in A B; do
  echo "== $s" >> $R/large.txt
  run $s timeout 60 python3 bench/probes/hostsplit/large.py --layers sage --nodes 150000 --edges 300000 --no-input-grad --profile --rows 30 >> $R/large.txt 2>&1
done
grep -E "==|fwd\+bwd" $R/large.txt
t epoch
for s in A B; do
  echo "== $s" >> $R/epoch.txt
  run $s timeout 80 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 3 >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
t end
