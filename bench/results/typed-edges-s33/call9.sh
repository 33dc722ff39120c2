#!/usr/bin/env bash
# Session 33, call 9: the failing backward of a max over an edge DAG
# (call 8): are the forward's winner codes (returned as a result here,
# checked against the reference) right, and does it fail on small graphs?
set -u
source bench/gpu_setup.sh .carry "$OUT"
RUN=$B/bin/gnn-run
P=bench/results/typed-edges-s33/probe
for spec in "$P/max_codes.mlir pubmed" "$P/max_codes.mlir powerlaw:nodes=20000,edges=200000,seed=1" \
            "$P/max_only.mlir powerlaw:nodes=300,edges=3000 --grad" "$P/max_only.mlir batch:graphs=300 --grad" \
            "$P/max_only.mlir powerlaw:nodes=2000,edges=20000 --grad"; do
  set -- $spec
  f=$1; g=$2; shift 2
  if timeout 60 $RUN $f --graph=$g --backend=cuda "$@" > $R/run-$(basename $f .mlir).json 2> $R/run.err; then
    echo "ok   $(basename $f) $g $*"
  else
    echo "FAIL $(basename $f) $g $*: $(grep -o 'error.*' $R/run.err | head -2 | tr '\n' ' ')"
  fi
done 2>&1 | tee $R/localise.txt
