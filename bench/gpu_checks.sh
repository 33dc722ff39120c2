#!/usr/bin/env bash
# What produced bench/results/scoreboard-h100.md, scoreboard-grad-h100.md,
# tuner-h100.txt, autodiff-cora-h100.txt, sanitize-cora-h100.txt and
# python-h100/{pytest-cuda-final,cora-1seed}.txt, in one call on the GPU
# machine (about 8 minutes on an H100):
#   bench/gpu_checks.sh CARRY OUT
# CARRY holds gnn-run and gnn-opt (stripped), py312/_gnnc*.so (the Python
# module for the machine's Python), peers/ (a copy of ../shared/bench/peers
# with its turbo-gnn wheel) and datasets/ (pubmed, musae-github, blogcatalog,
# cora from ../shared/datasets); OUT receives the tables and logs.
set -u
export PATH=/usr/local/cuda/bin:$PATH
B=$(realpath "$1"); R=$(realpath -m "$2"); mkdir -p "$R"
P=$B/peers; D=$B/datasets
# The op scoreboard (forward), peers and gnnc in one run.
OUT=$R/sb DATASETS=$D timeout 300 bash $P/run.sh $B/gnn-run > /dev/null 2>&1
cp $R/sb/table.md $R/table-fwd.md; cp $R/sb/peers.jsonl $R/peers.jsonl
cp $R/sb/gnnc.jsonl $R/gnnc-fwd.jsonl; rm -rf $R/sb
# Forward + backward (gnn-run --grad), against the same peers' run;
# arxiv-like without the (slow, CPU double) reference check.
mkdir -p /tmp/g
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
  python3 $P/dump_graph.py $g $D /tmp/g/$g.txt > /dev/null
done
{ GNNC_OPS_FLAGS=--grad bash $P/gnnc_ops.sh $B/gnn-run /tmp/g/pubmed.txt \
    /tmp/g/musae-github.txt /tmp/g/blogcatalog.txt /tmp/g/qm9-batch4096.txt
  GNNC_OPS_FLAGS="--grad --no-check" bash $P/gnnc_ops.sh $B/gnn-run \
    /tmp/g/arxiv-like.txt; } > $R/gnnc-grad.jsonl
python3 $P/side_by_side.py $R/gnnc-grad.jsonl $R/peers.jsonl > $R/table-grad.md
# The autotuner, cold cache then warm.
export GNNC_CACHE_DIR=/tmp/tune-cache
for i in cold warm; do
  GNNC_AUTOTUNE=on $B/gnn-run $P/gnnc_ops/spmm_unweighted.mlir \
    --graph=/tmp/g/arxiv-like.txt --backend=cuda --no-check --reps=20 |
    python3 -c 'import json,sys; d=json.load(sys.stdin)["cuda"]; print(sys.argv[1], d["median_ms"], json.dumps(d["schedule"]), "compile_ms", d.get("compile_ms"))' $i
done > $R/tuner.txt 2>&1
unset GNNC_CACHE_DIR
# Correctness: every example's forward and backward on cora, the sanitizer
# over every kernel family (backward included), the Python package's CUDA
# tests, and Cora training against PyG.
bash test/Integration/run-autodiff.sh $B/gnn-opt $B/gnn-run $D cora > $R/autodiff.txt 2>&1
TOOLS="memcheck racecheck" CHUNKS="8192" bash test/Integration/sanitize.sh \
  $B/gnn-run $D cora $B/gnn-opt > $R/sanitize.txt 2>&1
mkdir -p /tmp/pkg; cp -r python/gnnc /tmp/pkg/; cp $B/py312/_gnnc*.so /tmp/pkg/gnnc/
export PYTHONPATH=/tmp/pkg GNNC_DATASETS=$D
GNNC_TEST_DEVICE=cuda python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_core.py python/tests/test_nn_cuda.py > $R/pytest-cuda.txt 2>&1
for m in gcn gat; do
  python3 examples/python/train_cora.py --model $m --seeds 1 --compare-pyg
done > $R/cora.txt 2>&1
tail -n 3 $R/table-fwd.md $R/table-grad.md $R/pytest-cuda.txt $R/cora.txt
