#!/usr/bin/env bash
# Session 75, call 3 (one GPU): weight gradients in slices of at least 128
# rows instead of 256 (ProgramLowering's chunk formula: GINE's 35,970-row
# gradients 141 -> 256 blocks). bench/probes/atb/chunks.cu's sweep of
# gemmRowSplit over slice counts first, then the layers' CUDA tests on the
# new module, GINE's kernels (torch.profiler) and bench/gine.py in
# alternating processes, old (the module of calls 1-2) against new, and
# gine_segments.py on the new one. Outputs in out.tgz.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; xz -dc .carry/py312chunks/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; cp .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so /tmp/pkgold/gnnc/
O=/tmp/o75c; rm -rf $O; mkdir -p $O
t chunks
timeout 60 .carry/probe/chunks > $O/chunks.txt 2>&1
t tests
(cd python/tests && timeout 100 python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py > $O/nn_cuda.txt 2>&1)
for side in old new; do
  pp=/tmp/pkg; [ $side = old ] && pp=/tmp/pkgold
  t "kernels $side"
  PYTHONPATH=$pp timeout 60 python3 bench/probes/host/gine_kernels.py "$D/qm9" > $O/kernels-$side.txt 2>&1
done
t gine
for i in 1 2; do
  PYTHONPATH=/tmp/pkgold timeout 45 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 45 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
t segments
timeout 60 python3 bench/probes/host/gine_segments.py "$D/qm9" --steps 150 > $O/segments-new.txt 2>&1
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
cat $O/chunks.txt; tail -1 $O/nn_cuda.txt
for side in old new; do grep -E "step|gnnc::call|atb|sumSlices" $O/kernels-$side.txt | cut -c1-52,124-200; done
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
tail -4 $O/segments-new.txt
