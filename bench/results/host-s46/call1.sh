#!/usr/bin/env bash
# Call 1 (HEAD 6b7f1ff, before this session's changes): where a layer
# call's host time goes (py-spy --native over host-bound loops, spin.py),
# then every gnnc.nn layer against PyG's on the three graphs at 64 and 128
# channels with replays (the default) and the host part.
set -u
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W
SPY=$B/tools/py-spy
t spy
for m in "op gcn" "fwd gcn" "step gcn" "gcn2 gcn" "fwd gin" "op gin"; do
  set -- $m
  timeout 60 $SPY record --native -r 1000 -f raw -o $W/spy-$1-$2.txt -- python3 bench/probes/host/spin.py $1 $2 4 > $W/spin-$1-$2.txt 2>&1
  echo "rc=$?" >> $W/spin-$1-$2.txt
  python3 bench/probes/host/spin.py $1 $2 2 >> $W/spin-$1-$2.txt 2>&1
done
t floor
timeout 90 python3 bench/probes/host/floor.py gcn > $W/floor-gcn.txt 2>&1
t layers
timeout 400 python3 bench/nn_layers.py --datasets $D --reps 20 > $W/layers.txt 2>&1
echo "rc=$?" >> $W/layers.txt
t done
cp $R/progress.txt $W/
tar czf $R/out.tgz -C $W .
