#!/usr/bin/env bash
# Session 25, call 4: call2's module. A = HEAD 006c5ed's package and module;
# B = this tree (the m16n8k8 row split, inputs without gradient built
# without it); C = B plus whole-layer.patch (.carry/wlpy). The CUDA pytest
# of what B merges; where C's SAGE step on a sampled-like graph (150,000
# nodes, 300,000 edges, x needing no gradient) spends its device time
# against A's; Cora's models.GCN epoch, A against B.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA /tmp/pkgC; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
cp -r .carry/wlpy/gnnc /tmp/pkgC/; cp $B/py312/_gnnc*.so /tmp/pkgC/gnnc/
run() { s=$1; shift; case $s in A) PYTHONPATH=/tmp/pkgA "$@";; B) PYTHONPATH=/tmp/pkg "$@";; C) PYTHONPATH=/tmp/pkgC "$@";; esac; }
GNNC_TEST_DEVICE=cuda timeout 120 python -m pytest -q -p no:cacheprovider python/tests/test_gcn_model.py python/tests/test_nn.py -k "without_grad or GCN or gcn_model" > $R/pytest.txt 2>&1
tail -2 $R/pytest.txt
for s in A C; do
  echo "== $s" >> $R/large.txt
  run $s timeout 60 python3 bench/probes/hostsplit/large.py --layers sage --nodes 150000 --edges 300000 --no-input-grad --profile --rows 30 >> $R/large.txt 2>&1
done
for s in A B; do
  echo "== $s" >> $R/cora.txt
  run $s timeout 100 python3 examples/python/train_cora.py --model gcn --seeds 3 --compare-pyg >> $R/cora.txt 2>&1
done
grep -E "==|speed-up" $R/cora.txt
grep -E "==|fwd\+bwd" $R/large.txt
