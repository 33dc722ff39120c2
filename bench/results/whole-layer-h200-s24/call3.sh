#!/usr/bin/env bash
# Session 24 call 3: GCNConv and SAGEConv as one gnn function each (matmuls,
# propagation, bias: gcn_model / sage_layer), B = the working tree, against
# A = HEAD's python package (same native module): CUDA tests of the changed
# layers, host time per call, forward+backward on three graphs, and the
# reddit-like sampled SAGE epoch (GEMM-bound: gnnc's GEMMs against PyTorch's).
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312/_gnnc*.so /tmp/pkgA/gnnc/
t tests
GNNC_TEST_DEVICE=cuda timeout 200 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_gcn_model.py python/tests/test_autocast.py python/tests/test_nn_cuda.py -k "gcn or GCN or sage or SAGE" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
t split
for s in A B A B; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/split.txt
  PYTHONPATH=$pp timeout 60 python3 bench/probes/hostsplit/split.py --layers gcn,sage,sagemax --calls 1000 >> $R/split.txt 2>&1
done
t layers
for s in A B; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  PYTHONPATH=$pp timeout 150 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --layers gcn sage_mean sage_max --reps 20 > $R/layers-$s.txt 2>&1
done
t epoch
for s in A B A B; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/epoch.txt
  PYTHONPATH=$pp timeout 100 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 4 >> $R/epoch.txt 2>&1
done
t done
