#!/usr/bin/env bash
# Session 33, call 8: call 7's one failure (fused_aggregation's gradient
# with --grad on pubmed; run-examples had run it forward only before)
# localised: the whole function, without the heavy-row split, on a
# generated graph, and each of its two parts alone.
set -u
source bench/gpu_setup.sh .carry "$OUT"
RUN=$B/bin/gnn-run
P=bench/results/typed-edges-s33/probe
for spec in "test/Integration/Inputs/fused_aggregation.mlir pubmed" \
            "test/Integration/Inputs/fused_aggregation.mlir pubmed --split=0" \
            "test/Integration/Inputs/fused_aggregation.mlir powerlaw:nodes=20000,edges=200000,seed=1" \
            "$P/max_only.mlir pubmed" "$P/spmm_only.mlir pubmed" "$P/spmm_only.mlir pubmed --split=0"; do
  set -- $spec
  f=$1; g=$2; shift 2
  if timeout 60 $RUN $f --graph=$g --backend=cuda --grad "$@" > $R/run.json 2> $R/run.err; then
    echo "ok   $(basename $f) $g $*"
  else
    echo "FAIL $(basename $f) $g $*: $(grep -o 'worst error.*' $R/run.err | head -1)"
  fi
done 2>&1 | tee $R/localise.txt
