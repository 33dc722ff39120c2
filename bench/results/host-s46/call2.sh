#!/usr/bin/env bash
# Call 2: the stale-graph fill inside the run and the kept per-stream
# workspace (this session's build, .carry/py312) against HEAD's module
# (.carry/py312-old): runtime GPU gtests, the layers A/B alternated (pubmed,
# 64 channels, GCN/GIN/SAGE mean, and the host part), floor.py's op profile,
# GINE on QM9 A/B, Cora epochs (GCN, GAT, 10 seeds, against PyG), then
# the whole Python suite on CUDA in 8 shards.
set -u
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W
mkdir -p /tmp/pkg-old; cp -r python/gnnc /tmp/pkg-old/; cp $B/py312-old/_gnnc*.so /tmp/pkg-old/gnnc/
xz -dc $B/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 150 /tmp/rt --gtest_filter='Gpu*' > $W/gtest.txt 2>&1; echo "rc=$?" >> $W/gtest.txt
t ab
for r in 1 2; do for v in new old; do
  P=/tmp/pkg; [ $v = old ] && P=/tmp/pkg-old
  PYTHONPATH=$P timeout 100 python3 bench/nn_layers.py --datasets $D --graphs pubmed --channels 64 --layers gcn gin sage_mean --parts speed host --reps 20 > $W/layers-$v-r$r.txt 2>&1
done; done
t floor
timeout 60 python3 bench/probes/host/floor.py gcn > $W/floor-gcn.txt 2>&1
t gine
for v in new old; do
  P=/tmp/pkg; [ $v = old ] && P=/tmp/pkg-old
  PYTHONPATH=$P timeout 60 python3 bench/gine.py $D/qm9 --layers 3 --rounds 2 > $W/gine-$v.txt 2>&1
done
t cora
for m in gcn gat; do
  timeout 90 python3 examples/python/train_cora.py --model $m --seeds 10 --compare-pyg > $W/cora-$m.txt 2>&1
done
t suite
bash bench/cuda_suite.sh $W $W/summary.txt 8 280
t done
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
