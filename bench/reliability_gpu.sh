#!/usr/bin/env bash
# The GPU checks of the second reliability round (issue 34) in one call on
# the GPU machine (docs/Reliability.md):
#   bench/reliability_gpu.sh CARRY OUT
# CARRY holds gnn-run and gnn-opt (this build), gnn-run-old (the build before
# the round, for the speed A/B), py312/_gnnc*.so and datasets/ (cora,
# citeseer, pubmed, musae-github, blogcatalog); OUT receives:
#   nan-pytest.txt      python/tests/test_nan.py's CUDA half: NaN/inf patterns
#                       of all eight gnnc.nn layers against PyG, forward and
#                       gradients
#   nan-examples.txt    test/Integration/run-nan.sh: every example with
#                       poisoned inputs on the GPU against the reference
#   pytest-cuda.txt     the package's CUDA tests (core, layers, reliability)
#   graph-check.txt     bench/python_graph_check.py --device cuda: the cost of
#                       the graph cache's contents check
#   cora.txt            Cora GCN and GAT, 3 seeds, gnnc against PyG (eager
#                       and one CUDA graph)
#   autodiff.txt, sanitize.txt   every example's step against the reference;
#                       compute-sanitizer over every kernel family
#   ab.txt              old and new gnn-run, forward and --grad medians,
#                       alternating, on three graphs (the NaN-keeping max)
set -u
source bench/gpu_setup.sh "$1" "$2"
t nan
GNNC_TEST_DEVICE=cuda timeout 400 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_nan.py -k cuda > "$R/nan-pytest.txt" 2>&1
timeout 300 bash test/Integration/run-nan.sh "$B/gnn-run" > "$R/nan-examples.txt" 2>&1
t pytest
GNNC_TEST_DEVICE=cuda timeout 600 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_core.py python/tests/test_nn_cuda.py \
  python/tests/test_reliability.py > "$R/pytest-cuda.txt" 2>&1
t graph-check
timeout 300 python3 bench/python_graph_check.py --device cuda > "$R/graph-check.txt" 2>&1
t cora
for m in gcn gat; do
  timeout 300 python3 examples/python/train_cora.py --model $m --seeds 3 --compare-pyg --cuda-graph
done > "$R/cora.txt" 2>&1
t checks
timeout 400 bash test/Integration/run-autodiff.sh "$B/gnn-opt" "$B/gnn-run" "$D" cora > "$R/autodiff.txt" 2>&1
TOOLS="memcheck" CHUNKS="8192" timeout 400 bash test/Integration/sanitize.sh \
  "$B/gnn-run" "$D" cora "$B/gnn-opt" > "$R/sanitize.txt" 2>&1
t ab
for g in pubmed musae-github blogcatalog; do
  for e in sage_max gat gatv2 transformer agnn gcn; do
    for grad in "" "--grad"; do
      for run in "$B/gnn-run-old" "$B/gnn-run" "$B/gnn-run-old" "$B/gnn-run"; do
        # shellcheck disable=SC2086
        "$run" examples/$e.mlir --graph="$D/$g" --backend=cuda --reps=50 --warmup=10 \
          --no-check $grad > /tmp/ab.json 2>/dev/null || { echo "$g $e $grad $run failed"; continue; }
        python3 -c "
import json, sys; c = json.load(open('/tmp/ab.json'))['cuda']
print(sys.argv[1], sys.argv[2], sys.argv[3] or 'fwd', sys.argv[4].split('/')[-1],
      c.get('fwdbwd_median_ms', c.get('median_ms')))" "$g" "$e" "$grad" "$run"
      done
    done
  done
done > "$R/ab.txt" 2>&1
t done
