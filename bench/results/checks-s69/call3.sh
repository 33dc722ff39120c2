#!/usr/bin/env bash
# Session 69, call 3 (one GPU; a call 2 planned with parts 2 and 3 alone
# could not start and was folded in here): binaries of 5e3c8fc (spmm
# `counted`); B = the same with checks-s68/chunk-rule.patch applied.
# Part 1: both op-level scoreboards (bench/scoreboard_both.sh: peers and
# gnnc in one run, bf16 and f32; OUT/tables.md). Part 2: per-step medians
# (--profile-steps, 20 after 5, A then B) of the cases the chunk rule lost
# (f32 gatv2 --grad 7 %, bf16 gt 2.5 %) or gained in call 1, on arxiv-like.
# Part 3: GNNRuntimeTests and the Python suite's extremum/winner and bf16
# max tests on CUDA.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
bash bench/scoreboard_both.sh .carry "$OUT" > /dev/null 2>&1
mkdir -p /tmp/bin
xz -dc .carry/bin/gnn-run.xz > /tmp/bin/A; xz -dc .carry/bin/gnn-run-B.xz > /tmp/bin/B
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/bin/GNNRuntimeTests; chmod +x /tmp/bin/*
source bench/gpu_setup.sh .carry "$OUT"
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
[ -f $G/arxiv-like.npy ] || python3 $P/dump_graph.py arxiv-like /tmp $G/arxiv-like.npy > /dev/null 2>&1
t profile
for case in "gnnc_ops gatv2 --grad" "gnnc_ops_bf16 gt --grad" "gnnc_ops_bf16 gatv2 --grad" "gnnc_ops_bf16 spmm_sum fwd"; do
  set -- $case; set=$1 op=$2 grad=$3; [ $grad = fwd ] && grad=""
  for v in A B; do
    timeout 90 /tmp/bin/$v $P/$set/$op.mlir --graph=$G/arxiv-like.npy --backend=cuda \
      --no-check --reps=20 --warmup=5 --profile-steps $grad > /tmp/p.json 2> /tmp/p.err
    python3 - $set $op "${grad:-fwd}" $v <<'PY' >> "$OUT"/profile.txt
import json, sys
try:
    c = json.load(open("/tmp/p.json"))["cuda"]
    if sys.argv[3] == "--grad":
        f = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["fwd"]["step_ms"])
        b = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["bwd"]["step_ms"])
        print(*sys.argv[1:], "fwdbwd %.4f" % c["fwdbwd_median_ms"], "| fwd %.4f:" % c["fwd"]["median_ms"], f,
              "| bwd %.4f:" % c["bwd"]["median_ms"], b)
    else:
        f = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["step_ms"])
        print(*sys.argv[1:], "fwd %.4f:" % c["median_ms"], f)
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/p.err").read()[:300])
PY
  done
done
t gtest
timeout 50 /tmp/bin/GNNRuntimeTests > "$OUT"/gtest.txt 2>&1; echo "exit $?" >> "$OUT"/gtest.txt
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 45 python3 -m pytest -q -p no:cacheprovider -rs \
  -k "extremum or winner or (max and (bf16 or bfloat16 or half or float16))" > "$OUT"/pytest.txt 2>&1
 echo "exit $?" >> "$OUT"/pytest.txt)
t done
tail -3 "$OUT"/gtest.txt "$OUT"/pytest.txt
cat "$OUT"/profile.txt "$OUT"/tables.md
