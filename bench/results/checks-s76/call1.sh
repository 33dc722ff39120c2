#!/usr/bin/env bash
# Session 76, call 1 (one GPU): weight gradients beside the input
# gradient's steps (ProgramLowering's placeRowSplitsBeside: a row-split
# gemm with "overlaps": k runs on the thread's second stream). "old" = the
# module of a1a617d (.carry/py312chunks), "new" = this tree's; the same
# Python. bench/gine.py in alternating processes (and new with
# GNNC_CONCURRENT_LAUNCHES=0: the same Programs, windows in order), the
# runtime's GPU gtests (the new ARowSplitGemmRunsBesideALaunch among them),
# every layer's CUDA test against PyG, GINE's kernels and segments,
# nn_layers.py speed for GCN/SAGE/GIN old against new, test_core.py on
# CUDA. Outputs in out.tgz.
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; xz -dc .carry/py312chunks/_gnnc.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc .carry/s76/GNNRuntimeTests.xz > /tmp/GNNRuntimeTests; chmod +x /tmp/GNNRuntimeTests
O=/tmp/o76a; rm -rf $O; mkdir -p $O
t gine
for i in 1 2 3; do
  PYTHONPATH=/tmp/pkgold timeout 45 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 45 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
GNNC_CONCURRENT_LAUNCHES=0 timeout 45 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-inorder.txt 2>&1
t gtest
timeout 90 /tmp/GNNRuntimeTests --gtest_filter='Gpu*' > $O/gtest.txt 2>&1
t nn_cuda
(cd python/tests && timeout -s INT 120 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py > $O/nn_cuda.txt 2>&1)
t kernels
timeout 45 python3 bench/probes/host/gine_kernels.py "$D/qm9" > $O/kernels-new.txt 2>&1
timeout 45 python3 bench/probes/host/gine_segments.py "$D/qm9" --steps 150 > $O/segments-new.txt 2>&1
t layers
for side in old new; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  PYTHONPATH=$pp timeout 60 python3 bench/nn_layers.py --datasets "$D" --parts speed --channels 64 \
    --layers gcn sage_mean gin > $O/layers-$side.txt 2>&1
done
t core
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout -s INT 90 python3 -m pytest -q -p no:cacheprovider test_core.py > $O/core.txt 2>&1)
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
tail -3 $O/gtest.txt; tail -1 $O/nn_cuda.txt; tail -1 $O/core.txt
grep -E "step|gnnc::call|atb|sumSlices" $O/kernels-new.txt | cut -c1-52,124-200
tail -4 $O/segments-new.txt
for side in old new; do echo "== layers $side"; tail -12 $O/layers-$side.txt; done
cat $O/progress.txt
