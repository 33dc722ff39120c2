#!/usr/bin/env bash
# Session 74, call 1 (one GPU): where GINE's step spends its host time
# (issue 31). gine_segments.py (both sides, segment by segment), py-spy's
# native samples of each side's steps (as bench/gine.py runs them), the
# cuBLASLt probe written in session 73, bench/gine.py for reference.
# Outputs in out.tgz.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
O=/tmp/o; mkdir -p $O
(which perf; nproc; lscpu | head -20; python3 -c "import torch; print(torch.__version__)") > $O/host.txt 2>&1
t lt
(cd bench/probes/gemm && nvcc -O3 -arch=sm_90 lt_algos.cu -lcublasLt -lcublas -o /tmp/lt && timeout 60 /tmp/lt) > $O/lt.txt 2>&1
t segments
for i in 1 2; do
  timeout 150 python3 bench/probes/host/gine_segments.py "$D/qm9" --steps 200 > $O/segments-$i.txt 2>&1
done
t pyspy
for side in gnnc pyg; do
  timeout 60 .carry/pyspy/py-spy record --native --threads -r 997 -f raw -o $O/spy-$side.txt -- \
    python3 bench/probes/host/gine_segments.py "$D/qm9" --loop 12 --side $side > $O/spy-$side.log 2>&1
done
t gine
timeout 100 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine.txt 2>&1
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
cat $O/host.txt | head -5; tail -25 $O/lt.txt; cat $O/segments-1.txt | tail -25; tail -3 $O/segments-2.txt
tail -3 $O/spy-*.log; grep forward $O/gine.txt
