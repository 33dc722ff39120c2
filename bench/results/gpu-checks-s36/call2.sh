# Session 36 call 2 (the tree of e9cf7fa, kernels as session 35 left them):
# - session 35's prepared sweep (../spmm-crc-s35/call6.sh): compute-sanitizer
#   memcheck and racecheck over every kernel family in bf16 and f16, and the
#   typed and bipartite layers in f32 (against the reference), chunks 8192
#   and 4, twelve jobs in parallel;
# - beside it, the Python package's tests on CUDA (GNNC_TEST_DEVICE=cuda,
#   every test file) and test/Integration/static-rows.test's two commands
#   (lit and FileCheck are not on the GPU machine).
source bench/gpu_setup.sh .carry "$OUT"
S=/tmp/san; mkdir -p $S
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
t static-rows
{ $B/bin/gnn-run test/Integration/Inputs/static_rows.mlir --graph=powerlaw:nodes=7,edges=20 --backend=cuda --reps=1 --warmup=0 | grep -c '"match": true'
  $B/bin/gnn-run test/Integration/Inputs/static_rows.mlir --graph=powerlaw:nodes=20,edges=60 --backend=cuda --no-check --reps=1 --warmup=0; echo "rc=$?"; } > $R/static-rows.txt 2>&1
t sanitize+pytest
pids=()
for ty in f32 bf16 f16; do for tool in memcheck racecheck; do for ch in 8192 4; do
  cases=.; [ $ty = f32 ] && cases="-f32-(fwd|grad)[.]mlir"
  ( TYPES="$ty" TOOLS="$tool" CHUNKS="$ch" CASES="$cases" timeout 420 bash test/Integration/sanitize.sh $B/bin/gnn-run $D "$pl" > $S/$ty-$tool-$ch.txt 2>&1; echo "rc=$?" >> $S/$ty-$tool-$ch.txt ) &
  pids+=($!)
done; done; done
( cd python/tests && GNNC_TEST_DEVICE=cuda timeout 450 python3 -m pytest -q -p no:cacheprovider -rf . > $R/pytest-cuda.txt 2>&1; echo "rc=$?" >> $R/pytest-cuda.txt ) &
pids+=($!)
wait "${pids[@]}"
t done
for f in $S/*.txt; do echo "=== $(basename $f)"; cat $f; done > $R/sanitize.txt
grep -E "^=== |passed|rc=" $R/sanitize.txt
tail -5 $R/pytest-cuda.txt; cat $R/static-rows.txt
