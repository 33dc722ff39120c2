#!/usr/bin/env bash
# The GPU checks and measurements behind issue 28's closing note, in one call
# on the GPU machine:
#   bench/issue28_gpu.sh CARRY OUT
# CARRY holds gnn-run and gnn-opt (this build), py312/_gnnc*.so and datasets/
# (cora, pubmed, musae-github, blogcatalog); OUT receives:
#   pytest-cuda.txt   the package's CUDA tests (layers against PyG, outputs
#                     and every gradient; core; NaN patterns)
#   autodiff.txt      every example's training step against the reference
#                     (cora, test/Integration/run-autodiff.sh)
#   sanitize.txt      compute-sanitizer memcheck over every kernel family
#   jit.txt           bench/jit_latency.py: cold start of a GAT training step
#                     on Cora, steps over sampled subgraphs
#   layers.txt        bench/nn_layers.py: every layer against PyG
#                     (forward+backward on three graphs at 64 and 128
#                     channels; host time per call)
#   epochs.txt        examples/python/train_cora.py --compare-pyg: 2-layer
#                     GCN and GAT, Cora (10 seeds) and Citeseer (3), eager
#                     and under torch.compile(mode="reduce-overhead")
#   epochs-fused.txt  Cora again with every run's Adam fused (--fused-adam)
# Each part has its own time limit; progress.txt says which ran.
set -u
source bench/gpu_setup.sh "$1" "$2"
# jit_latency.py runs fresh processes from a build folder: one made of CARRY.
mkdir -p /tmp/jb/bin /tmp/jb/python; cp -r /tmp/pkg/gnnc /tmp/jb/python/
cp "$B/gnn-run" "$B/gnn-opt" /tmp/jb/bin/
PARTS=${PARTS:-"correctness jit layers epochs"}
for part in $PARTS; do
  t "$part"
  case $part in
    correctness)
      # Not timed: the three run side by side.
      GNNC_TEST_DEVICE=cuda timeout 240 python3 -m pytest -q -x -p no:cacheprovider \
        python/tests/test_nn_cuda.py python/tests/test_core.py python/tests/test_jit.py \
        > "$R/pytest-cuda.txt" 2>&1 &
      timeout 240 bash test/Integration/run-autodiff.sh "$B/gnn-opt" "$B/gnn-run" "$D" cora \
        > "$R/autodiff.txt" 2>&1 &
      TOOLS="memcheck" CHUNKS="8192" timeout 240 bash test/Integration/sanitize.sh \
        "$B/gnn-run" "$D" cora "$B/gnn-opt" > "$R/sanitize.txt" 2>&1 &
      wait ;;
    jit)
      # Modes interleaved over 3 processes each (the first process of a
      # machine also reads the libraries from disk), PyG's first step beside.
      timeout 300 python3 bench/jit_latency.py cold --warm-torch --repeat 3 --build /tmp/jb \
        > "$R/jit.txt" 2>&1
      for g in musae-github blogcatalog; do
        timeout 90 python3 bench/jit_latency.py sampled --graph "$D/$g" --build /tmp/jb \
          >> "$R/jit.txt" 2>&1
      done ;;
    epochs)
      RO="--compile --compile-mode reduce-overhead"
      for opt in "" --fused-adam; do
        out="$R/epochs${opt:+-fused}.txt"
        for m in gcn gat; do
          timeout 200 python3 examples/python/train_cora.py --model $m --seeds 10 \
            --compare-pyg $RO $opt >> "$out" 2>&1
        done
      done
      for m in gcn gat; do
        timeout 120 python3 examples/python/train_cora.py --dataset citeseer --model $m \
          --seeds 3 --compare-pyg $RO >> "$R/epochs.txt" 2>&1
      done ;;
    layers)
      timeout 220 python3 bench/nn_layers.py --datasets "$D" --reps 20 > "$R/layers.txt" 2>&1 ;;
  esac
done
t done
