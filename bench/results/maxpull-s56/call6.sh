#!/usr/bin/env bash
# Session 56, call 6 (one GPU), the final build (f95277f; lib/ as d773918):
# (1) the bf16 max's gradient on a bipartite graph against the reference;
# (2) test/Integration/run-half.sh (every op and the fused attentions in
# bf16 and f16, forward and --grad, against the reference; every example
# layer forward); (3) the whole Python suite on CUDA, 8 shards.
set -u
mkdir -p /tmp/bin; xz -dc .carry/bin/gnn-run.xz > /tmp/bin/gnn-run; chmod +x /tmp/bin/gnn-run
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry /tmp/r
t bipartite
cat > /tmp/bip.mlir <<'MLIR'
func.func @m(%g: !gnn.graph<bipartite>, %x: tensor<?x16xbf16> {gnn.differentiable, gnn.domain = "src"}) -> tensor<?x16xbf16> {
  %o = gnn.spmm max %g, %x : !gnn.graph<bipartite>, tensor<?x16xbf16> -> tensor<?x16xbf16>
  return %o : tensor<?x16xbf16>
}
MLIR
for spec in "bipartite:src=300,dst=200,edges=3000,seed=1" "bipartite:src=2000,dst=50,edges=40000,seed=2"; do
  out=$(gnn-run /tmp/bip.mlir --graph=$spec --backend=cuda --grad --reps=3 --warmup=1 2>&1); rc=$?
  echo "bipartite $spec rc=$rc $(printf '%s' "$out" | grep -c '"match": true') true $(printf '%s' "$out" | grep -c '"match": false') false" >> $R/checks.txt
done
cat $R/checks.txt
t half
timeout 170 bash test/Integration/run-half.sh gnn-run $D > $R/half.txt 2>&1; echo "rc=$?" >> $R/half.txt
grep -E "FAIL|passed" $R/half.txt | tail -5
t pytest
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
bash bench/cuda_suite.sh $W $S 8 280
cat $S
t done
grep -h -B5 -A30 "^____" $W/pytest-*.txt | head -300 > $R/failures.txt
tar czf $OUT/r.tgz -C /tmp r
