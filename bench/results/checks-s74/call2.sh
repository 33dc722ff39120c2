#!/usr/bin/env bash
# Session 74, call 2 (one GPU): the bias gradients summed by their weight
# gradients' row split and block reductions as trees (new) against session
# 73's module (old) in one call:
# the runtime's GPU tests (the row split with row sums), the CUDA layer
# tests, GINE's kernels (torch.profiler), bench/gine.py in alternating
# processes, gine_segments.py (host time segment by segment), py-spy's
# native samples of gnnc's step, the cuBLASLt probe. Outputs in out.tgz.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; xz -dc .carry/ab/old.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc .carry/gtest/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
O=/tmp/o; mkdir -p $O
(which perf; nproc; lscpu | grep -E "Model name|MHz"; python3 -c "import torch; print(torch.__version__)") > $O/host.txt 2>&1
t gtest
timeout 120 /tmp/rt --gtest_filter='GpuLibrary.*:GpuProgram.*' > $O/gtest.txt 2>&1
t tests
(cd python/tests && timeout 170 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py > $O/pytest.txt 2>&1)
for side in old new; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  t "kernels $side"
  PYTHONPATH=$pp timeout 60 python3 bench/probes/host/gine_kernels.py "$D/qm9" > $O/kernels-$side.txt 2>&1
done
t gine
for i in 1 2; do
  PYTHONPATH=/tmp/pkgold timeout 60 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 60 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
t segments
timeout 90 python3 bench/probes/host/gine_segments.py "$D/qm9" --steps 150 > $O/segments.txt 2>&1
t pyspy
timeout 40 .carry/pyspy/py-spy record --native --threads -r 997 -f raw -o $O/spy-gnnc.txt -- \
  python3 bench/probes/host/gine_segments.py "$D/qm9" --loop 10 --side gnnc > $O/spy-gnnc.log 2>&1
t lt
(cd bench/probes/gemm && nvcc -O3 -arch=sm_90 lt_algos.cu -lcublasLt -lcublas -o /tmp/lt && timeout 40 /tmp/lt) > $O/lt.txt 2>&1
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
tail -1 $O/gtest.txt; tail -1 $O/pytest.txt
for side in old new; do grep -E "step|gnnc::call|atb|sumSlices|elementwise|reduce_0|aggregation" $O/kernels-$side.txt | cut -c1-52,124-200; done
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
tail -25 $O/segments.txt; tail -2 $O/spy-gnnc.log; tail -20 $O/lt.txt
