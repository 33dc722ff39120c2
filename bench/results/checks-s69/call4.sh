#!/usr/bin/env bash
# Session 69, call 4 (one GPU): a longer call 3 (with both scoreboards and
# the peers' max) never started; this is it cut to what the device time
# left held. A = 5e3c8fc's gnn-run (spmm `counted`), B = A with checks-s68/chunk-rule.patch, M = A
# with a sum's masked term added under its mask (select(c, v, 0) ->
# select(c, acc + v, acc): the pulled bf16 max backward's loop 222 -> 190
# SASS instructions per 4 edges). Parts, most wanted first:
#  masked   bf16 max --grad, A M A M on blogcatalog and musae-github
#           (medians of 30, per-step), M's gradients against the reference
#  chunk    the chunk rule's losses in call 1 (f32 gatv2 --grad, bf16 gt
#           --grad) per step, A then B, arxiv-like (medians of 20)
#  tests    GNNRuntimeTests; the Python suite's extremum/winner and bf16 max
#           tests on CUDA (A's module)
#  predicated (added in session 70) bench/probes/predicated/edges.cu:
#           an aggregation's edges K at a time with predicated loads
#  layers   (added in session 70) bench/nn_layers.py: gnnc.nn layers against
#           PyG through autograd, A's module
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p /tmp/bin
for v in A:gnn-run B:gnn-run-B M:gnn-run-C GNNRuntimeTests:GNNRuntimeTests; do
  xz -dc .carry/bin/${v#*:}.xz > /tmp/bin/${v%%:*}; done; chmod +x /tmp/bin/*
source bench/gpu_setup.sh .carry "$OUT"
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
for g in blogcatalog musae-github; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > /tmp/dump.log 2>&1
python3 $P/dump_graph.py arxiv-like /tmp $G/arxiv-like.npy >> /tmp/dump.log 2>&1
row() {  # GRAPH LABEL: one line of the last /tmp/p.json
  python3 - "$@" <<'PY'
import json, sys
try:
    c = json.load(open("/tmp/p.json"))["cuda"]
    if "fwd" in c and "step_ms" in c["fwd"]:
        f = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["fwd"]["step_ms"])
        b = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["bwd"]["step_ms"])
        print(*sys.argv[1:], "fwdbwd %.4f" % c["fwdbwd_median_ms"], "| fwd %.4f:" % c["fwd"]["median_ms"], f,
              "| bwd %.4f:" % c["bwd"]["median_ms"], b)
    else:
        print(*sys.argv[1:], "fwdbwd %.4f" % c["fwdbwd_median_ms"])
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/p.err").read()[:300])
PY
}
t masked
for g in blogcatalog musae-github; do
  for v in A M A M; do
    timeout 60 /tmp/bin/$v $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --backend=cuda \
      --grad --no-check --reps=30 --warmup=5 --profile-steps > /tmp/p.json 2> /tmp/p.err
    row $g $v >> "$OUT"/masked.txt
  done
done
timeout 60 /tmp/bin/M $P/gnnc_ops_bf16/max.mlir --graph=$G/blogcatalog.npy --backend=cuda --grad --reps=3 \
  > /tmp/c.json 2>&1; echo "M check blogcatalog rc=$? $(grep -o '"match": [a-z]*' /tmp/c.json | sort | uniq -c | tr '\n' ' ')" >> "$OUT"/masked.txt
t predicated
# (added in session 70) bench/probes/predicated/edges.cu on five graphs
python3 $P/dump_graph.py pubmed $D $G/pubmed.npy >> /tmp/dump.log 2>&1
python3 $P/dump_graph.py qm9-batch4096 $D $G/qm9.npy >> /tmp/dump.log 2>&1
nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/edges bench/probes/predicated/edges.cu > "$OUT"/predicated.txt 2>&1 &&
  timeout 120 /tmp/edges $G/pubmed.npy $G/qm9.npy $G/musae-github.npy $G/blogcatalog.npy $G/arxiv-like.npy >> "$OUT"/predicated.txt 2>&1
t chunk
for case in "gnnc_ops gatv2" "gnnc_ops_bf16 gt"; do
  set -- $case
  for v in A B; do
    timeout 90 /tmp/bin/$v $P/$1/$2.mlir --graph=$G/arxiv-like.npy --backend=cuda \
      --no-check --reps=20 --warmup=5 --profile-steps --grad > /tmp/p.json 2> /tmp/p.err
    row $1 $2 $v >> "$OUT"/chunk.txt
  done
done
t tests
timeout 30 /tmp/bin/GNNRuntimeTests > "$OUT"/gtest.txt 2>&1; echo "exit $?" >> "$OUT"/gtest.txt
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 35 python3 -m pytest -q -p no:cacheprovider -rs \
  -k "extremum or winner or (max and (bf16 or bfloat16 or half or float16))" > "$OUT"/pytest.txt 2>&1
 echo "exit $?" >> "$OUT"/pytest.txt)
t layers
timeout 200 python3 bench/nn_layers.py --datasets "$D" --reps 20 > "$OUT"/layers.txt 2>&1; echo "exit $?" >> "$OUT"/layers.txt
t done
cat "$OUT"/masked.txt "$OUT"/chunk.txt; tail -3 "$OUT"/gtest.txt "$OUT"/pytest.txt
