#!/usr/bin/env bash
# Session 33, call 6: relation reduces of bf16/f16 results (an f32 workspace
# summed atomically, then rounded once) and RGCNConv under autocast in the
# autocast type. gnn-run's CUDA backend against the reference on the f32,
# bf16 and bipartite typed inputs (forward and --grad), compute-sanitizer
# memcheck on the bf16 backward, the Python tests on CUDA.
set -u
source bench/gpu_setup.sh .carry "$OUT"
RUN=$B/bin/gnn-run
t gnn-run
for f in rgcn-typed rgcn-typed-bf16 rgcn-typed-bipartite; do
  for g in "powerlaw:nodes=100000,edges=1000000,relations=3" "powerlaw:nodes=2000,edges=60000,relations=3,alpha=1.4" \
           "bipartite:src=30000,dst=2000,edges=400000,relations=3" "powerlaw:nodes=0,edges=0,relations=2"; do
    case "$f:$g" in rgcn-typed-bipartite:powerlaw*|rgcn-typed:bipartite*|rgcn-typed-bf16:bipartite*) continue;; esac
    for grad in "" "--grad"; do
      if timeout 120 $RUN test/Tools/Inputs/$f.mlir --graph="$g" --backend=cuda $grad > $R/run.json 2> $R/run.err; then
        echo "ok   $f $g $grad"
      else
        echo "FAIL $f $g $grad: $(head -c 400 $R/run.err)"
      fi
    done
  done
done > $R/gnn-run.txt 2>&1
grep -c "^ok" $R/gnn-run.txt; grep FAIL $R/gnn-run.txt | head
t sanitizer
compute-sanitizer --tool memcheck --error-exitcode 9 $RUN test/Tools/Inputs/rgcn-typed-bf16.mlir \
  --graph=powerlaw:nodes=3000,edges=40000,relations=3 --backend=cuda --grad --reps 1 --warmup 0 > $R/san-bf16.txt 2>&1
echo "memcheck bf16 --grad rc=$? $(grep 'ERROR SUMMARY' $R/san-bf16.txt)"
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 300 python3 -m pytest -q -p no:cacheprovider -rf \
    test_typed.py test_rgcn.py test_autocast.py > $R/pytest.txt 2>&1
  tail -3 $R/pytest.txt )
t end
