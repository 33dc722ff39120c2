#!/usr/bin/env bash
# The GPU checks behind bench/results (scoreboards, tuner, autodiff,
# sanitizer, Python package), in one or two calls on the GPU machine:
#   PARTS="fwd grad tuned tuner checks python" bench/gpu_checks.sh CARRY OUT
# PARTS (default: all of them, about 10 minutes on an H100):
#   fwd    the op scoreboard (peers and gnnc in one run: table-fwd.md)
#   grad   forward + backward (gnn-run --grad) against the same peers' run
#          (table-grad.md; needs fwd in the same OUT)
#   tuned  the forward with GNNC_AUTOTUNE=on and a warm cache (a first pass
#          tunes, the second is timed: table-fwd-tuned.md; needs fwd)
#   tuner  time to first result on arxiv-like, cold cache then warm
#   checks every example's forward and backward on cora against the
#          reference, the sanitizer over every kernel family
#   python the Python package's CUDA tests, gradients against PyG's layers
#          on cora and pubmed (test/PyG/check_pyg_grads.py), Cora training
#          against PyG (10 seeds; gnnc eager and as one CUDA graph), GAT
#          under torch.compile against eager (3 seeds) and the layer-level
#          arxiv-like comparison (bench/python_layers.py)
#   reddit the 114.6M-edge reddit-like graph in f32: cuSPARSE and turbo-gnn
#          (spmm-sum, gatv2, gt; forward and forward+backward) and gnnc's
#          forward and GATv2's and GT's --grad (no reference check) in one
#          run (bench/issue29_reddit.sh; table-reddit.md, the run's files
#          under OUT/reddit); not in the default PARTS
# CARRY holds gnn-run and gnn-opt (stripped), py312/_gnnc*.so (the Python
# module for the machine's Python), peers/ (a copy of ../shared/bench/peers
# with its turbo-gnn wheel) and datasets/ (pubmed, musae-github, blogcatalog,
# cora from ../shared/datasets); OUT receives the tables and logs.
set -u
export PATH=/usr/local/cuda/bin:$PATH
B=$(realpath "$1"); R=$(realpath -m "$2"); mkdir -p "$R"
P=$B/peers; D=$B/datasets
PARTS=" ${PARTS:-fwd grad tuned tuner checks python} "
want() { [[ "$PARTS" == *" $1 "* ]]; }
# turbo-gnn's bundled wheel, as run.sh installs it (the parts that call the
# peers' ops_bench.py or bench/python_layers.py directly need it too).
python3 -c "import turbo_gnn" 2> /dev/null ||
  python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl > /dev/null 2>&1
graphs() {
  mkdir -p /tmp/g
  for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
    [ -f /tmp/g/$g.txt ] || python3 $P/dump_graph.py $g $D /tmp/g/$g.txt > /dev/null
  done
}
# gnnc's side over the five graphs (arxiv-like without the slow CPU double
# reference check); extra gnn-run flags in $1.
gnnc_ops() {
  GNNC_OPS_FLAGS="$1" bash $P/gnnc_ops.sh $B/gnn-run /tmp/g/pubmed.txt \
    /tmp/g/musae-github.txt /tmp/g/blogcatalog.txt /tmp/g/qm9-batch4096.txt
  GNNC_OPS_FLAGS="$1 --no-check" bash $P/gnnc_ops.sh $B/gnn-run \
    /tmp/g/arxiv-like.txt
}
if want fwd; then
  OUT=$R/sb DATASETS=$D timeout 300 bash $P/run.sh $B/gnn-run > /dev/null 2>&1
  cp $R/sb/table.md $R/table-fwd.md; cp $R/sb/peers.jsonl $R/peers.jsonl
  cp $R/sb/gnnc.jsonl $R/gnnc-fwd.jsonl; rm -rf $R/sb
fi
if want grad; then
  graphs
  gnnc_ops --grad > $R/gnnc-grad.jsonl
  python3 $P/side_by_side.py $R/gnnc-grad.jsonl $R/peers.jsonl > $R/table-grad.md
fi
if want tuned; then
  graphs
  export GNNC_CACHE_DIR=/tmp/tuned-cache GNNC_AUTOTUNE=on
  gnnc_ops "" > $R/gnnc-tuning.jsonl
  gnnc_ops "" > $R/gnnc-fwd-tuned.jsonl
  unset GNNC_CACHE_DIR GNNC_AUTOTUNE
  python3 $P/side_by_side.py $R/gnnc-fwd-tuned.jsonl $R/peers.jsonl > $R/table-fwd-tuned.md
fi
if want tuner; then
  graphs
  export GNNC_CACHE_DIR=/tmp/tune-cache
  for i in cold warm; do
    GNNC_AUTOTUNE=on $B/gnn-run $P/gnnc_ops/spmm_unweighted.mlir \
      --graph=/tmp/g/arxiv-like.txt --backend=cuda --no-check --reps=20 |
      python3 -c 'import json,sys; d=json.load(sys.stdin)["cuda"]; print(sys.argv[1], d["median_ms"], json.dumps(d["schedule"]), "compile_ms", d.get("compile_ms"))' $i
  done > $R/tuner.txt 2>&1
  unset GNNC_CACHE_DIR
fi
if want checks; then
  bash test/Integration/run-autodiff.sh $B/gnn-opt $B/gnn-run $D cora > $R/autodiff.txt 2>&1
  TOOLS="memcheck racecheck" CHUNKS="8192" bash test/Integration/sanitize.sh \
    $B/gnn-run $D cora $B/gnn-opt > $R/sanitize.txt 2>&1
fi
if want python; then
  mkdir -p /tmp/pkg; cp -r python/gnnc /tmp/pkg/; cp $B/py312/_gnnc*.so /tmp/pkg/gnnc/
  export PYTHONPATH=/tmp/pkg GNNC_DATASETS=$D
  GNNC_TEST_DEVICE=cuda python3 -m pytest -q -p no:cacheprovider \
    python/tests/test_core.py python/tests/test_nn_cuda.py > $R/pytest-cuda.txt 2>&1
  python3 test/PyG/check_pyg_grads.py --graphs cora,pubmed --datasets $D \
    --json $R/pyg-grads.json > $R/pyg-grads.txt 2>&1
  for m in gcn gat; do
    python3 examples/python/train_cora.py --model $m --seeds 10 --compare-pyg --cuda-graph
  done > $R/cora.txt 2>&1
  # the step compiled (train_cora.py --compile) against eager in one process (3 seeds:
  # every new model compiles afresh).
  python3 examples/python/train_cora.py --model gat --seeds 3 --compile \
    > $R/cora-compile.txt 2>&1
  python3 bench/python_layers.py --peers $P > $R/layers.txt 2>&1
fi
if want reddit; then
  # (issue29_reddit.sh's f32 table, and GATv2's and GT's --grad beside it)
  DTYPES=float32 GRAD_OPS="gatv2 gt" bash bench/issue29_reddit.sh "$B" "$R/reddit" > /dev/null 2>&1
  cp $R/reddit/table-fp32.md $R/table-reddit.md
fi
for f in table-reddit.md table-fwd.md table-grad.md table-fwd-tuned.md tuner.txt autodiff.txt sanitize.txt pytest-cuda.txt pyg-grads.txt cora.txt cora-compile.txt layers.txt; do
  [ -f $R/$f ] || continue
  echo "== $f"; tail -n 3 $R/$f
done
