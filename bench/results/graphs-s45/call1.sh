#!/usr/bin/env bash
# Call 1: repeated runs replayed as CUDA graphs (Executor). The runtime's
# GPU gtests (the new RepeatedRunsReplayACapturedGraph among them), then
# A/B in one call with the same build: GNNC_CUDA_GRAPHS=0 (step by step, as
# before) against the default, alternated, two rounds: bench/gine.py (3
# layers, QM9 batch 4096) and bench/nn_layers.py (GCN, GIN, SAGE mean on
# pubmed, 64 channels, speed and host parts).
set -u
source bench/gpu_setup.sh .carry "$OUT"
xz -dc $B/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
t gtest
timeout 150 /tmp/rt --gtest_filter='Gpu*' > $R/gtest.txt 2>&1; echo "rc=$?" >> $R/gtest.txt
t gine
for r in 1 2; do for g in 0 1; do
  GNNC_CUDA_GRAPHS=$g timeout 100 python3 bench/gine.py $D/qm9 --layers 3 --rounds 2 > $R/gine-g$g-r$r.txt 2>&1
done; done
t layers
for r in 1 2; do for g in 0 1; do
  GNNC_CUDA_GRAPHS=$g timeout 100 python3 bench/nn_layers.py --datasets $D --graphs pubmed --channels 64 --layers gcn gin sage_mean --parts speed host --reps 20 > $R/layers-g$g-r$r.txt 2>&1
done; done
t done
