#!/usr/bin/env bash
# Session 73, call 4 (one GPU): the final atbNarrow (8 groups of 4 rows):
# the runtime's GPU tests, the CUDA Python tests, and old (2e7e5cd) against
# new in one call: GINE's kernels (torch.profiler), the host/device split
# (each side also with the calling-thread backward), bench/gine.py in
# alternating processes. Outputs in out.tgz.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; xz -dc .carry/ab/old.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc .carry/gtest/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
O=/tmp/o; mkdir -p $O
t gtest
timeout 120 /tmp/rt --gtest_filter='GpuLibrary.*:GpuProgram.*' > $O/gtest.txt 2>&1
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py > $O/pytest.txt 2>&1)
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider test_core.py > $O/core.txt 2>&1)
for side in old new; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  t "kernels $side"
  PYTHONPATH=$pp timeout 100 python3 bench/probes/host/gine_kernels.py "$D/qm9" > $O/kernels-$side.txt 2>&1
  t "split $side"
  PYTHONPATH=$pp timeout 120 python3 bench/probes/host/gine_split.py "$D/qm9" --rounds 30 > $O/split-$side.txt 2>&1
done
t gine
for i in 1 2; do
  PYTHONPATH=/tmp/pkgold timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
tail -1 $O/gtest.txt; tail -1 $O/pytest.txt; tail -1 $O/core.txt
for side in old new; do grep -E "atb|sumSlices|step" $O/kernels-$side.txt | cut -c1-50,150-230; tail -8 $O/split-$side.txt; done
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
