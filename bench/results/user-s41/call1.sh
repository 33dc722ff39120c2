#!/usr/bin/env bash
# Call 1: measurements of the session's starting code (9f3210d; no library
# change yet): full-graph training epochs on the two largest real graphs
# (bench/train_large.py), what a Python autograd backward costs on this
# host (bench/probes/host/py_backward.py), and issue 28's per-layer table
# (bench/nn_layers.py) on its three graphs and the two larger ones.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t train
timeout 170 python3 bench/train_large.py --datasets $D --graphs ego-twitter soc-slashdot0902 > $R/train-large.txt 2>&1
t pyback
timeout 40 python3 bench/probes/host/py_backward.py 5 > $R/py-backward.txt 2>&1
t layers
timeout 170 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --parts speed --reps 20 > $R/layers.txt 2>&1
t layers-large
timeout 120 python3 bench/nn_layers.py --datasets $D --graphs ego-twitter soc-slashdot0902 --parts speed --reps 10 > $R/layers-large.txt 2>&1
t done
