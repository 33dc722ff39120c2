#!/usr/bin/env bash
# Session 24 call 7: the weight gradient's row split as f32 cuBLAS GEMMs per
# slice (strided batch), summed in double in slice order: the runtime's GPU
# tests, GCNConv/SAGEConv fwd+bwd on a large graph (A = HEAD package and
# module, C = working tree), gnn-run --grad against the reference on qm9 and
# pubmed (the weight gradients' worst precision).
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; xz -dc .carry/bin/gr-N.xz > /tmp/gr; chmod +x /tmp/rt /tmp/gr
mkdir -p /tmp/ds; ln -s $D/qm9 /tmp/ds/qm9; ln -s $D/pubmed /tmp/ds/pubmed
( EXAMPLES="gcn gin sage_mean" timeout 80 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 6 > $R/autodiff.txt 2>&1 ) &
ja=$!
timeout 30 /tmp/rt --gtest_filter='GpuLibrary.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
for s in A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/large.txt
  PYTHONPATH=$pp timeout 40 python3 bench/probes/hostsplit/large.py --profile 2>&1 | grep -E "fwd\+bwd|atbSlices|sumSlices|gemm|sgemm" | cut -c1-70,100-200 >> $R/large.txt
done
wait $ja
cat $R/large.txt $R/autodiff.txt
