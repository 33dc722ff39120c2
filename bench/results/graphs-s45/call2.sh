#!/usr/bin/env bash
# Call 2: the GPU gtests again (the replay test's capture part now with the
# caller's workspace), the A/B of call 1 again (nn_layers first this time),
# then the whole Python suite on CUDA in 8 shards (default: replays on).
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc $B/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
W=/tmp/w; mkdir -p $W
t gtest
timeout 150 /tmp/rt --gtest_filter='Gpu*' > $W/gtest.txt 2>&1; echo "rc=$?" >> $W/gtest.txt
t layers
for r in 1 2; do for g in 1 0; do
  GNNC_CUDA_GRAPHS=$g timeout 100 python3 bench/nn_layers.py --datasets $D --graphs pubmed --channels 64 --layers gcn gin sage_mean --parts speed host --reps 20 > $W/layers-g$g-r$r.txt 2>&1
done; done
t gine
for r in 1 2; do for g in 1 0; do
  GNNC_CUDA_GRAPHS=$g timeout 100 python3 bench/gine.py $D/qm9 --layers 3 --rounds 2 > $W/gine-g$g-r$r.txt 2>&1
done; done
t suite
bash bench/cuda_suite.sh $W $W/summary.txt 8 280
t done
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
