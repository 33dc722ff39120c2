#!/usr/bin/env bash
# Call 3 (this session's code: an Executable keeps 64 replayed graphs, was
# 16): the runtime's GPU gtests (ManyKeysInTurnKeepTheirReplays among
# them); a deep model of one layer configuration (bench/probes/replay/
# deep.py) with HEAD's module (old) and this one (new) in alternating
# processes; the CUDA tests of reduce-overhead and replays; then issue 28's
# Cora epochs (10 seeds, eager, against PyG) and under reduce-overhead.
set -u
for v in gnn-run gnn-opt GNNRuntimeTests; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgold; cp -r /tmp/pkg/gnnc /tmp/pkgold/
xz -dc .carry/exp/py312old/_gnnc.cpython-312-x86_64-linux-gnu.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
t gtest
GNNC_TEST_DATASETS=$D timeout 120 $B/bin/GNNRuntimeTests --gtest_filter='Gpu*' > $R/gtest.txt 2>&1
echo "rc=$?" >> $R/gtest.txt
t deep
for round in 1 2; do
  for v in old new; do
    pp=/tmp/pkg; [ $v = old ] && pp=/tmp/pkgold
    sides=gnnc; [ $round = 1 ] && [ $v = old ] && sides="gnnc pyg"
    echo "== $v round $round" >> $R/deep.txt
    PYTHONPATH=$pp timeout 100 python3 bench/probes/replay/deep.py --datasets $D --graph pubmed \
      --layers gcn gin --depths 2 16 24 48 --reps 30 --sides $sides 2>/dev/null >> $R/deep.txt
  done
done
t pytest
GNNC_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_nn_cuda.py \
  -k "reduce_overhead or replay or graph" > $R/pytest.txt 2>&1
t cora
for m in gcn gat; do
  timeout 100 python3 examples/python/train_cora.py --model $m --seeds 10 --compare-pyg > $R/cora-$m.txt 2>&1
done
t cora-ro
for m in gcn gat; do
  timeout 90 python3 examples/python/train_cora.py --model $m --seeds 3 --compile --compile-mode reduce-overhead --compare-pyg > $R/cora-ro-$m.txt 2>&1
done
t done
