#!/usr/bin/env bash
# Call 1: why pubmed's steps cost more host time than larger graphs' (GIN,
# GCN): the CUDA runtime calls per step (probes/replay/counts.py) with the
# replays on and off; the runtime's GPU gtests on HEAD.
set -u
xz -dc .carry/bin/GNNRuntimeTests.xz > .carry/GNNRuntimeTests; chmod +x .carry/GNNRuntimeTests
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w47a; mkdir -p $W
t counts
timeout 150 python3 bench/probes/replay/counts.py --datasets $D > $W/counts.txt 2>&1
t counts-nographs
GNNC_CUDA_GRAPHS=0 timeout 150 python3 bench/probes/replay/counts.py --datasets $D --graphs pubmed musae-github > $W/counts-nographs.txt 2>&1
t gtest
(cd /tmp && timeout 120 $B/GNNRuntimeTests --gtest_brief=1 > $W/gtest.txt 2>&1; echo "rc=$?" >> $W/gtest.txt)
t done
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
