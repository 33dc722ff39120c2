#!/usr/bin/env bash
# Prepared in session 24, never run: the row split on the FP64 tensor cores
# (dmma-row-split.patch). Build .carry first with the patch applied: py312/
# (the module), py312-old/ (HEAD's module), oldpy/gnnc (HEAD's package),
# bin/GNNRuntimeTests.xz and bin/gr-M.xz (gnn-run); datasets/ as usual.
# Then: the runtime's GPU tests; large.py with HEAD's package and module (A)
# against whole-layer.patch's package on the patched module (C); gnn-run
# --grad against the reference on qm9 and pubmed (the weight gradients'
# worst precision); the reddit-like SAGE epoch, A against C.
set -u
source bench/gpu_setup.sh .carry "$OUT"   # C (working tree with both patches)
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; xz -dc .carry/bin/gr-M.xz > /tmp/gr; chmod +x /tmp/rt /tmp/gr
mkdir -p /tmp/ds; ln -s $D/qm9 /tmp/ds/qm9; ln -s $D/pubmed /tmp/ds/pubmed
( EXAMPLES="gcn gin sage_mean" timeout 120 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 6 > $R/autodiff.txt 2>&1 ) &
ja=$!
timeout 60 /tmp/rt --gtest_filter='GpuLibrary.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
for s in A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/large.txt
  PYTHONPATH=$pp timeout 60 python3 bench/probes/hostsplit/large.py --profile 2>&1 | grep -E "fwd\+bwd|atbSlices|sumSlices|gemm" | cut -c1-70,100-200 >> $R/large.txt
done
wait $ja
for s in A C A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/epoch.txt
  PYTHONPATH=$pp timeout 90 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 3 >> $R/epoch.txt 2>&1
done
cat $R/large.txt $R/autodiff.txt; grep -E "==|median" $R/epoch.txt
