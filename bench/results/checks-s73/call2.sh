#!/usr/bin/env bash
# Session 73, call 2 (one GPU): the narrow row-split kernel (atbNarrow):
# the runtime's GPU tests, bench/gine.py old/new in alternating processes,
# the kernels of GINE's step (torch.profiler), the CUDA Python tests.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; xz -dc .carry/ab/old.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc .carry/gtest/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 120 /tmp/rt --gtest_filter='GpuLibrary.*:GpuProgram.*' > "$R/gtest.txt" 2>&1
t ab
for i in 1 2 3; do
  PYTHONPATH=/tmp/pkgold timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 > "$R/gine-old-$i.txt" 2>&1
  timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 > "$R/gine-new-$i.txt" 2>&1
done
t kernels
timeout 100 python3 bench/probes/host/gine_kernels.py "$D/qm9" > "$R/kernels.txt" 2>&1
t split
timeout 100 python3 bench/probes/host/gine_split.py "$D/qm9" --rounds 30 > "$R/split.txt" 2>&1
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py \
  > "$R/pytest.txt" 2>&1)
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider \
  test_core.py > "$R/core.txt" 2>&1)
t done
cat "$R/progress.txt"; tail -3 "$R/gtest.txt"
for f in "$R"/gine-*.txt; do echo "$f: $(grep forward_backward "$f")"; done
tail -8 "$R/split.txt"; tail -2 "$R/pytest.txt"; tail -2 "$R/core.txt"
