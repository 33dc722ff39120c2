# Session 35 call 6: compute-sanitizer memcheck and racecheck over every
# kernel family in bf16 and f16 (test/Integration/sanitize.sh TYPES, now
# with the typed and bipartite layers, forward and --grad), and the typed
# and bipartite cases in f32 (checked against the reference), chunks 8192
# and 4; twelve jobs in parallel.
source bench/gpu_setup.sh .carry "$OUT"
S=/tmp/san; mkdir -p $S
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
t sanitize
pids=()
for ty in f32 bf16 f16; do for tool in memcheck racecheck; do for ch in 8192 4; do
  cases=.; [ $ty = f32 ] && cases="-f32-(fwd|grad)[.]mlir"
  ( TYPES="$ty" TOOLS="$tool" CHUNKS="$ch" CASES="$cases" timeout 380 bash test/Integration/sanitize.sh $B/bin/gnn-run $D "$pl" > $S/$ty-$tool-$ch.txt 2>&1; echo "rc=$?" >> $S/$ty-$tool-$ch.txt ) &
  pids+=($!)
done; done; done
wait "${pids[@]}"
t done
for f in $S/*.txt; do echo "=== $(basename $f)"; cat $f; done > $R/sanitize.txt
grep -E "^=== |passed|rc=" $R/sanitize.txt
