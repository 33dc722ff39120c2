#!/usr/bin/env bash
# Session 25, call 2: the row split on m16n8k8 mma's (64 x 64 tiles), same
# .carry layout as call1.sh. Kernel alone against cuBLAS; GPU tests (the
# runtime's, and the CUDA pytest of GCN/SAGE); large.py and the reddit-like
# SAGE epoch, HEAD (A) against this tree (C); nn_layers GCN/SAGE mean on the
# three graphs, A against C; gnn-run --grad against the reference.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
for x in GNNRuntimeTests:rt gr-M:gr rb:rb; do xz -dc .carry/bin/${x%%:*}.xz > /tmp/${x#*:}; chmod +x /tmp/${x#*:}; done
mkdir -p /tmp/ds; ln -s $D/qm9 /tmp/ds/qm9; ln -s $D/pubmed /tmp/ds/pubmed
timeout 60 /tmp/rt --gtest_filter='GpuLibrary.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
for spec in 180000,128,256,32,64 1000000,16,64 2708,64,16 40000,602,256 ; do
  timeout 60 /tmp/rb --gemm-row-split $spec >> $R/kernel.txt 2>&1
done
cat $R/kernel.txt
( EXAMPLES="gcn gin sage_mean" timeout 150 bash bench/autodiff_all.sh /tmp/gr /tmp/ds 6 > $R/autodiff.txt 2>&1 ) &
ja=$!
for s in A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/large.txt
  PYTHONPATH=$pp timeout 60 python3 bench/probes/hostsplit/large.py --profile 2>&1 | grep -E "fwd\+bwd|atbSlices|sumSlices|gemm" | cut -c1-70,100-200 >> $R/large.txt
done
wait $ja
cat $R/large.txt $R/autodiff.txt
for s in A C A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/epoch.txt
  PYTHONPATH=$pp timeout 90 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 3 >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
GNNC_TEST_DEVICE=cuda timeout 150 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_gcn_model.py python/tests/test_autocast.py -k "gcn or GCN or sage or SAGE" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
for s in A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  PYTHONPATH=$pp timeout 90 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --layers gcn sage_mean --reps 20 > $R/layers-$s.txt 2>&1
done
tail -20 $R/layers-A.txt $R/layers-C.txt
