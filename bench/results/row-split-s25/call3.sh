#!/usr/bin/env bash
# Session 25, call 3: call2's module and carry; the layers now build their
# function without the gradient of an input that needs none (a first
# layer's features). HEAD (A) against this tree (C): the reddit-like SAGE
# epoch, nn_layers, the host split, Cora's GCN epoch (models.GCN); the CUDA
# pytest of GCN/SAGE.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
run() { if [ $1 = A ]; then PYTHONPATH=/tmp/pkgA "${@:2}"; else PYTHONPATH=/tmp/pkg "${@:2}"; fi; }
for s in A C A C; do
  echo "== $s" >> $R/epoch.txt
  run $s timeout 90 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 --train-fraction 0.65 --epochs 3 >> $R/epoch.txt 2>&1
done
grep -E "==|median" $R/epoch.txt
for s in A C; do
  echo "== $s" >> $R/cora.txt
  run $s timeout 100 python3 examples/python/train_cora.py --model gcn --seeds 3 --compare-pyg >> $R/cora.txt 2>&1
  echo "== $s" >> $R/split.txt
  run $s timeout 40 python3 bench/probes/hostsplit/split.py --layers gcn,sage --calls 1000 >> $R/split.txt 2>&1
  run $s timeout 90 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --layers gcn sage_mean --reps 20 > $R/layers-$s.txt 2>&1
done
GNNC_TEST_DEVICE=cuda timeout 150 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_gcn_model.py -k "gcn or GCN or sage or SAGE or without_grad" > $R/pytest.txt 2>&1
tail -3 $R/pytest.txt
tail -4 $R/cora.txt; cat $R/split.txt | tail -30
for s in A C; do tail -5 $R/layers-$s.txt; done
