#!/usr/bin/env bash
# Session 33, call 1: typed graphs on CUDA (issue 31 item 4). gnn-run's CUDA
# backend against the reference evaluator (forward and --grad) on the
# relation gather/reduce inputs over typed graphs of several shapes, the
# refusal of a graph past the function's relations, compute-sanitizer on
# two runs, the Python tests on CUDA, and bench/rgcn.py (PyG against
# gnnc.nn's RGCNConv on the typed graph: 90 and 1,000 relations on 1M
# edges, and the dense 20K-node graph whose memory was over PyG's).
set -u
source bench/gpu_setup.sh .carry "$OUT"
RUN=$B/bin/gnn-run
t gnn-run
for g in "powerlaw:nodes=100000,edges=1000000,relations=90" \
         "powerlaw:nodes=20000,edges=1000000,relations=3,alpha=1.3" \
         "powerlaw:nodes=300,edges=5000,relations=1" \
         "powerlaw:nodes=0,edges=0,relations=3" \
         "batch:graphs=500,relations=2" \
         "bipartite:src=30000,dst=2000,edges=400000,relations=3" \
         "bipartite:src=5,dst=0,edges=0,relations=3"; do
  for f in test/Tools/Inputs/rgcn-typed.mlir test/Tools/Inputs/rgcn-typed-bipartite.mlir; do
    case "$g:$f" in bipartite*:*typed.mlir) continue;; powerlaw*:*bipartite.mlir|batch*:*bipartite.mlir) continue;; esac
    for grad in "" "--grad"; do
      if timeout 120 $RUN $f --graph="$g" --backend=cuda $grad > $R/run.json 2> $R/run.err; then
        echo "ok   $(basename $f) $g $grad"
      else
        echo "FAIL $(basename $f) $g $grad: $(head -c 400 $R/run.err)"
      fi
    done
  done
done > $R/gnn-run.txt 2>&1
grep -c "^ok" $R/gnn-run.txt; grep FAIL $R/gnn-run.txt | head
# A relation id past the function's count: refused by the Program.
$RUN test/Tools/Inputs/rgcn-typed.mlir --graph=powerlaw:nodes=300,edges=5000,relations=5 --backend=cuda --no-check > $R/refuse.json 2> $R/refuse.txt; echo "rc=$?" >> $R/refuse.txt
tail -2 $R/refuse.txt
t sanitizer
for grad in "" "--grad"; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $RUN test/Tools/Inputs/rgcn-typed.mlir \
    --graph=powerlaw:nodes=3000,edges=40000,relations=3 --backend=cuda $grad --reps 1 --warmup 0 > /dev/null 2> $R/san.txt
  echo "memcheck $grad rc=$? $(grep -c 'ERROR SUMMARY: 0' $R/san.txt)"
done > $R/sanitizer.txt 2>&1
cat $R/sanitizer.txt
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 240 python3 -m pytest -q -p no:cacheprovider -rf \
    test_typed.py test_rgcn.py test_hgt.py > $R/pytest.txt 2>&1
  tail -3 $R/pytest.txt )
t bench
timeout 200 python3 bench/rgcn.py --relations 90 1000 > $R/rgcn.txt 2>&1; tail -25 $R/rgcn.txt
timeout 120 python3 bench/rgcn.py --nodes 20000 --relations 90 > $R/rgcn-dense.txt 2>&1; tail -12 $R/rgcn-dense.txt
t end
