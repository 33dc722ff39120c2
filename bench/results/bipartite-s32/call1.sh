#!/usr/bin/env bash
# Session 32, call 1: bipartite graphs compiled to CUDA (issue 31 item 2).
# gnn-run's CUDA backend against the reference evaluator (forward, and the
# training step with --grad) on the bipartite layers of
# test/Integration/Inputs/bipartite over bipartite graphs of every shape;
# the Python layers' CUDA tests; the trimmed reddit-like epoch with the
# fused bipartite SAGE layer against the session-31 padded layer (P
# variants) in one process; train_ddp.py's own epoch.
set -u
source bench/gpu_setup.sh .carry "$OUT"
RUN=$B/bin/gnn-run
t gnn-run
for g in "bipartite:src=300000,dst=30000,edges=3000000" \
         "bipartite:src=2000,dst=50000,edges=500000" \
         "bipartite:src=100,dst=10,edges=200000,alpha=1.2" \
         "bipartite:src=5,dst=0,edges=0" "bipartite:src=0,dst=0,edges=0" \
         "powerlaw:nodes=20000,edges=200000"; do
  for f in test/Integration/Inputs/bipartite/*.mlir; do
    for grad in "" "--grad"; do
      n=$(basename $f .mlir)
      if timeout 60 $RUN $f --graph="$g" --backend=cuda $grad > $R/run.json 2> $R/run.err; then
        echo "ok   $n $g $grad"
      else
        echo "FAIL $n $g $grad: $(head -c 400 $R/run.err)"
      fi
    done
  done
done > $R/gnn-run.txt 2>&1
grep -c "^ok" $R/gnn-run.txt; grep FAIL $R/gnn-run.txt | head
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider -rf \
    test_bipartite.py > $R/pytest-bipartite.txt 2>&1
  tail -2 $R/pytest-bipartite.txt
  timeout 150 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py > $R/pytest-loader.txt 2>&1
  tail -2 $R/pytest-loader.txt )
t probe
ROUNDS=3 PHASES=1 VARIANTS=p1tf,p1tfP,p1t,p1tP timeout 200 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|^p[01]|Error|error" $R/prefetch.txt | head -30
t train
timeout 90 python3 examples/python/train_ddp.py --graph synthetic:232965:114615892:128:41 \
  --epochs 5 > $R/train.txt 2>&1
grep -E "median|MiB|epoch" $R/train.txt | tail -8
t done
