#!/usr/bin/env bash
# Session 24 call 4: the weight gradient's row split register-tiled (4 x 4
# entries per thread, same bits), then GCNConv and SAGEConv as one gnn
# function each again: A = HEAD's package and module, C = the working tree's.
set -u
source bench/gpu_setup.sh .carry "$OUT"   # C in /tmp/pkg
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 60 /tmp/rt --gtest_filter='GpuLibrary.*' > $R/gtest.txt 2>&1; tail -3 $R/gtest.txt
t epoch
for s in A C A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/epoch.txt
  PYTHONPATH=$pp timeout 90 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 3 >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
t tests
GNNC_TEST_DEVICE=cuda timeout 150 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_gcn_model.py python/tests/test_autocast.py -k "gcn or GCN or sage or SAGE" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
t split
for s in A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/split.txt
  PYTHONPATH=$pp timeout 40 python3 bench/probes/hostsplit/split.py --layers gcn,sage --calls 1000 >> $R/split.txt 2>&1
done
t layers
for s in A C; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  PYTHONPATH=$pp timeout 60 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github --channels 64 128 --parts speed --layers gcn sage_mean --reps 20 > $R/layers-$s.txt 2>&1
done
t done
