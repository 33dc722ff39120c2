#!/usr/bin/env bash
# Session 27, call 3. A = HEAD 955c903's module (.carry/py312-A), B = this
# tree: every GEMM a cuBLASLt matmul on a cached plan (no per-call
# heuristic). Checks (GpuLibrary/GpuProgram, gnn-run --grad against the
# reference, CUDA pytest), then host time per call (split.py) and the
# large-graph SAGE step in f32 and under bf16 autocast, A and B alternated.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r python/gnnc /tmp/pkgA/; cp $B/py312-A/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
xz -dc .carry/bin/gr.xz > /tmp/gr; xz -dc .carry/bin/rt.xz > /tmp/rt; chmod +x /tmp/gr /tmp/rt
mkdir -p /tmp/ds; ln -s $D/pubmed /tmp/ds/pubmed
t gtest
timeout 120 /tmp/rt --gtest_filter='GpuLibrary.*:GpuProgram.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
t autodiff
( EXAMPLES="gcn gcn3 sage_mean gin gat gatv2 transformer agnn" timeout 200 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 8 > $R/autodiff.txt 2>&1 ) &
ja=$!
t pytest
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py python/tests/test_gcn_model.py python/tests/test_autocast.py python/tests/test_half.py > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
wait $ja
tail -10 $R/autodiff.txt
t split
for s in A B A B; do
  echo "== $s" >> $R/split.txt
  run $s timeout 60 python3 bench/probes/hostsplit/split.py --layers gcn,sage,gin --calls 1000 --no-pyg >> $R/split.txt 2>&1
done
t large
for s in A B A B; do
  for ac in "" "--autocast bfloat16"; do
    echo "== $s $ac" >> $R/large.txt
    run $s timeout 60 python3 bench/probes/hostsplit/large.py --layers gcn,sage --nodes 150000 --edges 300000 --no-input-grad $ac >> $R/large.txt 2>&1
  done
done
grep -E "==|fwd\+bwd" $R/large.txt
t end
