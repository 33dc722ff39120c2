#!/usr/bin/env bash
# Session 78, call 2 (one GPU): issue 31's acceptance re-measured on this
# tree (module and Python unchanged since 46fda58): GINEConv on QM9 batches
# (bench/gine.py, the layer alone and the 3-layer model, batches 256 to
# 16,384), RGCNConv with 90 and 1,000 relations on a 1M-edge graph
# (bench/rgcn.py), the ogbn-mag-shaped to_hetero GraphSAGE and HGT models
# (bench/hetero_sage.py), then the typed, relational, bipartite and
# heterogeneous layers' tests on CUDA. Outputs written straight to $OUT
# (few files: the device returns only a handful). Carried: .carry/datasets,
# .carry/s76.
set -u
mkdir -p .carry/py312; xz -dc .carry/s76/new.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
for b in 256 1024 4096 16384; do
  t gine-$b
  echo "== layer-only batch $b" >> $R/gine.txt
  timeout 100 python3 bench/gine.py "$D/qm9" --batch $b --layer-only 2>&1 | tail -4 >> $R/gine.txt
  echo "== model batch $b" >> $R/gine.txt
  timeout 100 python3 bench/gine.py "$D/qm9" --batch $b 2>&1 | tail -4 >> $R/gine.txt
done
t rgcn
timeout 150 python3 bench/rgcn.py --relations 90 1000 > $R/rgcn.txt 2>&1
t hetero
for m in sage hgt; do
  echo "== $m" >> $R/hetero.txt
  timeout 100 python3 bench/hetero_sage.py --model $m >> $R/hetero.txt 2>&1
done
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 170 python3 -m pytest -q -p no:cacheprovider -rf \
    test_typed.py test_rgcn.py test_bipartite.py test_hgt.py > $R/pytest.txt 2>&1 )
t end
cat $R/gine.txt; tail -9 $R/rgcn.txt; grep -v "^step" $R/hetero.txt | tail -30; tail -3 $R/pytest.txt
