#!/usr/bin/env bash
# Session 74, call 3 (one GPU), the tree of call 2 plus tests: the row sums
# end to end (gnn-run --grad on Inputs/linear_bias.mlir against the
# reference, also under compute-sanitizer memcheck and racecheck), every
# example's training step against the reference (bench/autodiff_all.sh:
# the block reductions as trees), racecheck over the examples' kernels,
# test_core.py on CUDA (opcheck of the ops), and GINE old (session 73's
# module) against new once more: bench/gine.py in alternating processes and
# gine_loop.py; py-spy's samples of gnnc's step. Outputs in out.tgz.
set -u
xz -dc .carry/py312new/_gnnc.so.xz > .carry/py312new/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p .carry/py312; cp .carry/py312new/_gnnc*.so .carry/py312/
source bench/gpu_setup.sh .carry "$OUT"
cp -r /tmp/pkg /tmp/pkgold; xz -dc .carry/ab/old.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p /tmp/bin; for b in gnn-run gnn-opt; do xz -dc .carry/tools/$b.xz > /tmp/bin/$b; chmod +x /tmp/bin/$b; done
O=/tmp/o; mkdir -p $O
t rowsums
for g in cora "powerlaw:nodes=20000,edges=200000,seed=1" "powerlaw:nodes=3000,edges=0,seed=1"; do
  spec=$g; [ $g = cora ] && spec=$D/cora
  timeout 30 /tmp/bin/gnn-run test/Integration/Inputs/linear_bias.mlir --grad --graph="$spec" \
    --backend=cuda --reps=3 --warmup=1 > $O/rowsums-$(echo $g | cut -c1-12).json 2>&1
  echo "$g: rc $? $(grep -c '"match": true' $O/rowsums-$(echo $g | cut -c1-12).json) matches" >> $O/rowsums.txt
done
t sanitize
CASES='linear_bias|examples/(gcn|gin|gatv2|sage_max)|_bwd' TOOLS="memcheck racecheck" \
  CHUNKS="8192" timeout 150 bash test/Integration/sanitize.sh \
  /tmp/bin/gnn-run "$D" musae-github /tmp/bin/gnn-opt > $O/sanitize.txt 2>&1
t autodiff
mkdir -p /tmp/ds; for g in cora musae-github; do ln -s $D/$g /tmp/ds/$g; done
timeout 100 bash bench/autodiff_all.sh /tmp/bin/gnn-run /tmp/ds 16 > $O/autodiff.txt 2>&1
t core
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 100 python3 -m pytest -q -p no:cacheprovider test_core.py > $O/core.txt 2>&1)
t gine
for i in 1 2; do
  PYTHONPATH=/tmp/pkgold timeout 40 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-old-$i.txt 2>&1
  timeout 40 python3 bench/gine.py "$D/qm9" --rounds 3 > $O/gine-new-$i.txt 2>&1
done
t loop
PYTHONPATH=/tmp/pkgold timeout 60 python3 bench/probes/host/gine_loop.py "$D/qm9" --batches 4096 --rounds 3 > $O/loop-old.txt 2>&1
timeout 60 python3 bench/probes/host/gine_loop.py "$D/qm9" --batches 4096 --rounds 3 > $O/loop-new.txt 2>&1
t pyspy
timeout 45 .carry/pyspy/py-spy record --native --nonblocking -r 200 -f raw -o $O/spy-gnnc.txt -- \
  python3 bench/probes/host/gine_segments.py "$D/qm9" --loop 6 --side gnnc > $O/spy-gnnc.log 2>&1
t done
cp "$R/progress.txt" $O/; tar czf "$R/out.tgz" -C $O .
cat $O/rowsums.txt; tail -4 $O/sanitize.txt; tail -3 $O/autodiff.txt; tail -1 $O/core.txt
for f in $O/gine-*.txt; do echo "$(basename $f): $(grep forward_backward $f)"; done
tail -2 $O/loop-old.txt $O/loop-new.txt; tail -2 $O/spy-gnnc.log; ls -la $O/spy-gnnc.txt
