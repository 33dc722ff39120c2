#!/usr/bin/env bash
# Call 4 (this session's code: GINE's lin inside the gnn function, the
# row split's slice sum spread over warps): the runtime's GPU gtests; the
# whole Python suite on CUDA; issue 28's per-layer table (nn_layers.py);
# GINE on QM9, HEAD's Python against this tree's, alternating processes;
# GINE's kernels (gine_kernels.py).
# (call5.sh, the next call on that machine: Cora's epochs beside an MLP's,
# issue 29's reddit-like points.)
set -u
for v in gnn-run GNNRuntimeTests; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w47d; mkdir -p $W
mkdir -p /tmp/pkg-head; cp -r .carry/pyhead/python/gnnc /tmp/pkg-head/; cp "$B"/py312/_gnnc*.so /tmp/pkg-head/gnnc/
t gtest
(cd /tmp && timeout 120 $B/bin/GNNRuntimeTests --gtest_brief=1 > $W/gtest.txt 2>&1; echo "rc=$?" >> $W/gtest.txt)
t suite
bash bench/cuda_suite.sh $W $W/summary.txt 8 280
t layers
timeout 120 python3 bench/nn_layers.py --datasets $D --parts speed --reps 20 > $W/layers.txt 2>&1
for side in new head; do
  t "gine $side"
  pp=/tmp/pkg; [ $side = head ] && pp=/tmp/pkg-head
  PYTHONPATH=$pp timeout 60 python3 bench/gine.py $D/qm9 > $W/gine-$side-3.txt 2>&1
done
t gine-kernels
timeout 60 python3 bench/probes/host/gine_kernels.py $D/qm9 > $W/gine-kernels.txt 2>&1
t done
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
