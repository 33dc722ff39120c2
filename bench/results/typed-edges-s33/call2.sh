#!/usr/bin/env bash
# Session 33, call 2: after the autograd step stopped keeping the inputs its
# backward does not read (RGCN's [N, R, out] rows). bench/rgcn.py again
# (the 1M-edge graphs of call 1), the Python tests on CUDA (every layer's
# training goes through the changed step), gnn-run's typed inputs with
# compute-sanitizer's summaries kept.
set -u
source bench/gpu_setup.sh .carry "$OUT"
RUN=$B/bin/gnn-run
t bench
timeout 200 python3 bench/rgcn.py --relations 90 1000 > $R/rgcn.txt 2>&1; tail -12 $R/rgcn.txt
timeout 120 python3 bench/rgcn.py --nodes 20000 --relations 90 > $R/rgcn-dense.txt 2>&1; tail -6 $R/rgcn-dense.txt
t sanitizer
for f in rgcn-typed rgcn-typed-bipartite; do
  g="powerlaw:nodes=3000,edges=40000,relations=3"
  [ $f = rgcn-typed-bipartite ] && g="bipartite:src=3000,dst=500,edges=40000,relations=3"
  for grad in "" "--grad"; do
    compute-sanitizer --tool memcheck --error-exitcode 9 $RUN test/Tools/Inputs/$f.mlir \
      --graph=$g --backend=cuda $grad --reps 1 --warmup 0 > $R/san-$f$grad.txt 2>&1
    echo "memcheck $f $grad rc=$? $(grep 'ERROR SUMMARY' $R/san-$f$grad.txt)"
  done
done > $R/sanitizer.txt 2>&1
cat $R/sanitizer.txt
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 330 python3 -m pytest -q -p no:cacheprovider -rf -x \
    test_typed.py test_rgcn.py test_nn_cuda.py test_autocast.py test_bipartite.py > $R/pytest.txt 2>&1
  tail -3 $R/pytest.txt )
t end
