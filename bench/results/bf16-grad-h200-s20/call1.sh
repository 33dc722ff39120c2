#!/usr/bin/env bash
# Session 20 call 1: the bf16 backward's cross-kernel sums in f32 and the
# result conversions not rounded in registers. Checks of every bf16 op of the
# scoreboard with --grad on the five default graphs (new; old for gatv2/gt),
# in parallel; run-half.sh and the Python half tests (new); then the bf16
# forward+backward times of both binaries, sequentially.
set -u
for f in .carry/bin/*.xz; do xz -dc "$f" > "${f%.xz}"; chmod +x "${f%.xz}"; done
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G $R/check
t graphs
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/graphs.txt 2>&1
t checks
export B P G R
( for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
    for op in gatv2 gt spmm_sum spmm_unweighted max; do echo "new $g $op"; done
    for op in gatv2 gt; do echo "old $g $op"; done
  done ) | xargs -P 12 -L 1 bash -c 'bin=$B/bin/gnn-run; [ "$0" = old ] && bin=$B/bin/gnn-run-old; timeout 420 "$bin" $P/gnnc_ops_bf16/$2.mlir --graph=$G/$1.npy --backend=cuda --grad --reps=1 --warmup=0 > $R/check/$0.$1.$2.json 2> $R/check/$0.$1.$2.err; echo "$0 $1 $2 rc=$?" >> $R/check/rc.txt' &
checks=$!
( timeout 300 bash test/Integration/run-half.sh "$B/bin/gnn-run" "$D" pubmed "powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2" > "$R/half.txt" 2>&1; echo "rc=$?" >> "$R/half.txt" ) &
half=$!
( GNNC_TEST_DEVICE=cuda timeout 300 python -m pytest -q -p no:cacheprovider python/tests/test_half.py python/tests/test_autocast.py > "$R/pytest.txt" 2>&1; echo "rc=$?" >> "$R/pytest.txt" ) &
py=$!
wait $checks $half $py
t timing
for round in 1 2; do
  [ $round = 2 ] && [ $SECONDS -gt 380 ] && break
  for side in new old; do
    bin=$B/bin/gnn-run; [ $side = old ] && bin=$B/bin/gnn-run-old
    DTYPE=bfloat16 GNNC_OPS_FLAGS="--grad --no-check" timeout 110 bash $P/gnnc_ops.sh "$bin" $G/*.npy > $R/grad-$side-$round.jsonl 2>> $R/timing.err
  done
done
t done
