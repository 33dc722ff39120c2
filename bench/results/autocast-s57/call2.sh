#!/usr/bin/env bash
# Session 57, call 2 (one GPU): (1) where a layer step's time goes under
# autocast(bf16) against float32 (host_ac.py), the session's start (old)
# and the new build; (2) the whole Python suite on CUDA (8 shards).
set -u
source bench/results/autocast-s57/common.sh
for pkg in old new; do
  t "host $pkg"
  PYTHONPATH=$(pkg_path $pkg) timeout 60 python3 bench/results/autocast-s57/host_ac.py $D sage_max gcn gin gat \
    > $R/host-$pkg.txt 2>&1
  echo "-- $pkg"; grep -E "step" $R/host-$pkg.txt
done
t suite
mkdir -p $R/suite
bash bench/cuda_suite.sh $R/suite $R/suite.txt 8 340
cat $R/suite.txt
t done
tar czf $OUT/r.tgz -C /tmp r
