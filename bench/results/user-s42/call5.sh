#!/usr/bin/env bash
# Call 5 (the final code): issue 28's per-layer table (bench/nn_layers.py,
# every layer forward+backward against PyG on pubmed, musae-github and
# blogcatalog at 64 and 128 channels), with PyTorch's default multithreaded
# backward and with every backward on the calling thread (both libraries).
# Outputs: layers-default.txt, layers-calling-thread.txt.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t default
timeout 200 python3 bench/nn_layers.py --datasets $D --parts speed --reps 10 > $R/layers-default.txt 2>&1
t calling-thread
timeout 200 python3 bench/nn_layers.py --datasets $D --parts speed --reps 10 --backward-on-calling-thread > $R/layers-calling-thread.txt 2>&1
t done
