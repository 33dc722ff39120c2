#!/usr/bin/env bash
# Session 20 call 3: xr's two gradients as one reduce (GATv2). Checks: bf16
# and f32 gatv2 --grad on the five graphs, run-half (power-law), CUDA tests
# of the attention layers, half and autocast (all in parallel); then A/B
# timings against the previous build (the f32 sums without the merge):
# gatv2 fwd+bwd in bf16 and f32, GATv2Conv/AGNNConv against PyG; then the
# autocast accuracy on Cora and Citeseer.
set -u
for f in .carry/bin/*.xz; do xz -dc "$f" > "${f%.xz}"; chmod +x "${f%.xz}"; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgold/gnnc; cp -r python/gnnc/. /tmp/pkgold/gnnc/; xz -dc $B/py312old/_gnnc.so.xz > /tmp/pkgold/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
P=$B/peers; G=/tmp/graphs; C=/tmp/check; mkdir -p $G $C
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
t checks
export B P G C
( for g in arxiv-like blogcatalog musae-github pubmed qm9-batch4096; do echo "gnnc_ops_bf16 $g"; echo "gnnc_ops $g"; done ) \
  | xargs -P 10 -L 1 bash -c 'timeout 300 $B/bin/gnn-run $P/$0/gatv2.mlir --graph=$G/$1.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.json 2> $C/$0.$1.err; echo "$0 $1 rc=$? $(grep -o "\"worst_ratio_to_tolerance\": [0-9.e+-]*" $C/$0.$1.json | tr "\n" " ") $(cat $C/$0.$1.err)" >> $R/checks.txt' &
checks=$!
( timeout 200 bash test/Integration/run-half.sh "$B/bin/gnn-run" "$D" "powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2" > "$R/half.txt" 2>&1; echo "rc=$?" >> "$R/half.txt" ) &
half=$!
( GNNC_TEST_DEVICE=cuda timeout 240 python -m pytest -q -p no:cacheprovider python/tests/test_half.py python/tests/test_autocast.py python/tests/test_nn_cuda.py python/tests/test_nn.py -k "gatv2 or GATv2 or agnn or AGNN or half or autocast or transformer or Transformer" > "$R/pytest.txt" 2>&1; echo "rc=$?" >> "$R/pytest.txt" ) &
py=$!
wait $checks $half $py
t timing
for round in 1 2; do
  for side in new old; do
    bin=$B/bin/gnn-run; [ $side = old ] && bin=$B/bin/gnn-run-old
    for set in gnnc_ops_bf16 gnnc_ops; do for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
      ms=$(timeout 60 $bin $P/$set/gatv2.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 | python3 -c 'import json,sys; c=json.load(sys.stdin)["cuda"]; print(round(c["fwdbwd_median_ms"],4), round(c["bwd"]["median_ms"],4))')
      echo "$round $side $set $g $ms" >> $R/timing.txt
    done; done
  done
done
t layers
for side in new old; do
  pkg=/tmp/pkg; [ $side = old ] && pkg=/tmp/pkgold
  echo "== $side" >> $R/layers.txt
  GNNC_CACHE_DIR=/tmp/cache-$side PYTHONPATH=$pkg timeout 100 python bench/nn_layers.py --datasets $D --layers gatv2 agnn --parts speed --reps 20 >> $R/layers.txt 2>&1
done
t autocast
[ $SECONDS -lt 420 ] && timeout $((550 - SECONDS)) python bench/autocast_accuracy.py --models gcn gat --seeds 10 --dtype bfloat16 > $R/autocast.txt 2>&1
t done
