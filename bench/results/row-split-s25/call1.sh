#!/usr/bin/env bash
# Session 25, call 1: the row split on 64 x 64 tiles of the FP64 tensor
# cores. .carry: py312/ (this tree's module), py312-old/ + oldpy/gnnc
# (HEAD 006c5ed), bin/GNNRuntimeTests.xz, bin/gr-M.xz (gnn-run),
# bin/rb.xz (gnn-runtime-bench). The runtime's GPU tests; the kernel alone
# against cuBLAS at several slice counts; large.py and the reddit-like SAGE
# epoch with HEAD (A) against this tree (C, whole-layer GCN/SAGE);
# gnn-run --grad against the reference on qm9 and pubmed.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
for x in GNNRuntimeTests:rt gr-M:gr rb:rb; do xz -dc .carry/bin/${x%%:*}.xz > /tmp/${x#*:}; chmod +x /tmp/${x#*:}; done
mkdir -p /tmp/ds; ln -s $D/qm9 /tmp/ds/qm9; ln -s $D/pubmed /tmp/ds/pubmed
( EXAMPLES="gcn gin sage_mean" timeout 150 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 6 > $R/autodiff.txt 2>&1 ) &
ja=$!
timeout 60 /tmp/rt --gtest_filter='GpuLibrary.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
for spec in 180000,128,256,32,16,64,128 180000,256,128,32,64 1000000,16,64,256,1024 2708,64,16 40000,602,256 ; do
  timeout 60 /tmp/rb --gemm-row-split $spec >> $R/kernel.txt 2>&1
done
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
cat $R/kernel.txt $R/large.txt $R/autodiff.txt; grep -E "==|median" $R/epoch.txt
