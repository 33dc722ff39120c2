#!/usr/bin/env bash
# Session 21 call 2: compute-sanitizer (memcheck, racecheck) on the bf16 and
# f16 kernel families (test/Integration/sanitize.sh, TYPES="bf16 f16": the
# example layers and every op of half_ops.mlir with --grad) and on the f32
# edge maps with teams (spmm_weighted, sddmm_dot --grad), with the CUDA
# tests of test_core and test_half, in parallel; then the per-step profile
# of spmm_sum --grad on reddit-like (f32, bf16) and of its two backward ops.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; S=/tmp/san; mkdir -p $G $S
export B
t sanitize
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
pids=()
for ty in bf16 f16; do for tool in memcheck racecheck; do for ch in 8192 4; do
  ( TYPES="$ty" TOOLS="$tool" CHUNKS="$ch" timeout 420 bash test/Integration/sanitize.sh $B/bin/gnn-run $D "$pl" > $S/$ty-$tool-$ch.txt 2>&1; echo "rc=$?" >> $S/$ty-$tool-$ch.txt ) &
  pids+=($!)
done; done; done
( for tool in memcheck racecheck; do for fn in spmm_weighted sddmm_dot; do for ch in 8192 4; do
    out=$(timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B/bin/gnn-run test/Integration/Inputs/half_ops.mlir --function=$fn --graph="$pl" --backend=cuda --grad --max-chunks=$ch --reps=1 --warmup=0 2>&1); rc=$?
    m=$(printf '%s' "$out" | grep -c '"match": true'); s=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    echo "f32 $tool $ch $fn rc=$rc match_lines=$m $s"
  done; done; done > $S/f32.txt 2>&1 ) &
pids+=($!)
( GNNC_TEST_DEVICE=cuda timeout 400 python -m pytest -q -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py > /tmp/pytest.txt 2>&1; echo "rc=$?" >> /tmp/pytest.txt ) &
pids+=($!)
python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy > $R/log.txt 2>&1
wait "${pids[@]}"
for f in $S/*.txt; do echo "=== $(basename $f)"; grep -E "FAIL|passed|rc=|f32 " $f; done > $R/sanitize.txt
grep -E "FAIL|Error|error" -A3 $S/*.txt | head -60 >> $R/sanitize.txt
tail -15 /tmp/pytest.txt > $R/tests.txt
t profile
cat > /tmp/rev.mlir <<'M'
func.func @rev(%g: !gnn.graph, %x: tensor<?x128xTY>, %w: tensor<?xTY> {gnn.domain = "edge"}) -> tensor<?x128xTY> {
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xTY>) reversed : tensor<?x128xTY> -> tensor<?x128xTY>
  return %o : tensor<?x128xTY>
}
func.func @dot(%g: !gnn.graph, %x: tensor<?x128xTY>, %y: tensor<?x128xTY>) -> tensor<?xTY> {
  %o = gnn.sddmm dot %g, %x, %y : tensor<?x128xTY>, tensor<?x128xTY> -> tensor<?xTY>
  return %o : tensor<?xTY>
}
func.func @fwd(%g: !gnn.graph, %x: tensor<?x128xTY>, %w: tensor<?xTY> {gnn.domain = "edge"}) -> tensor<?x128xTY> {
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xTY>) : tensor<?x128xTY> -> tensor<?x128xTY>
  return %o : tensor<?x128xTY>
}
M
for ty in f32 bf16; do
  sed "s/TY/$ty/g" /tmp/rev.mlir > /tmp/rev-$ty.mlir
  set=gnnc_ops; [ $ty = bf16 ] && set=gnnc_ops_bf16
  timeout 150 $B/bin/gnn-run $P/$set/spmm_sum.mlir --graph=$G/reddit-like.npy --backend=cuda --grad --no-check --reps=10 --warmup=3 --profile-steps > /tmp/p.json 2>>$R/log.txt
  python3 - $ty grad < /tmp/p.json >> $R/profile.jsonl <<'PY'
import json, sys
c = json.load(sys.stdin)["cuda"]
print(json.dumps({"dtype": sys.argv[1], "what": "spmm_sum --grad", "fwdbwd_ms": c.get("fwdbwd_median_ms"),
                  "fwd": c["fwd"].get("step_ms"), "bwd": c["bwd"].get("step_ms"), "fwd_ms": c["fwd"].get("median_ms"), "bwd_ms": c["bwd"].get("median_ms")}))
PY
  for fn in fwd rev dot; do
    timeout 100 $B/bin/gnn-run /tmp/rev-$ty.mlir --function=$fn --graph=$G/reddit-like.npy --backend=cuda --no-check --reps=10 --warmup=3 --profile-steps > /tmp/p.json 2>>$R/log.txt
    python3 - $ty $fn < /tmp/p.json >> $R/profile.jsonl <<'PY'
import json, sys
c = json.load(sys.stdin).get("cuda", {})
print(json.dumps({"dtype": sys.argv[1], "what": sys.argv[2], "ms": c.get("median_ms"), "steps": c.get("step_ms")}))
PY
  done
done
t done
