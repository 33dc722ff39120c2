#!/usr/bin/env bash
# Session 68, call 2 (one GPU), e0be1a5's binaries: where the bf16 max's
# training step gains at a split threshold of 512 on arxiv-like (call 1's
# sweep) and loses on musae-github: per-kernel medians (--profile-steps) of
# the forward and the backward. The hypothesis: at 128 arxiv-like's chunks
# (L = ceil(edges / 8192) = 285 CSR positions) hold heavy rows wholly inside
# them, which the final kernel takes one at a time with the whole block; a
# threshold >= L, or more chunks, leaves it only the merges. "T:M" runs
# threshold T with --max-chunks=M (M = 32768: chunks of 128 positions on
# arxiv-like, no row wholly inside one). Then reddit-like's max (L = 13,991)
# at 512 (its threshold now) to 16,384, to bound a rule; the peers' max
# (turbo-gnn, PyG) in the same run for the ratio.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p /tmp/bin
for v in gnn-run; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
for g in musae-github blogcatalog arxiv-like; do [ -f $G/$g.npy ] || python3 $P/dump_graph.py $g $D $G/$g.npy; done > /tmp/dump.log 2>&1
t profile
for g in arxiv-like musae-github blogcatalog; do
  for set in gnnc_ops_bf16 gnnc_ops; do
    [ $g != arxiv-like ] && [ $set = gnnc_ops ] && continue
    ss="128 256 512 1024 128:32768 256:32768"; [ $g = musae-github ] && ss="128 512"
    [ $g = blogcatalog ] && ss="128 256"
    for s in $ss; do
      mc=8192; case $s in *:*) mc=${s#*:};; esac
      timeout 60 /tmp/bin/gnn-run $P/$set/max.mlir --graph=$G/$g.npy --backend=cuda --split=${s%:*} --max-chunks=$mc \
        --grad --no-check --reps=30 --warmup=5 --profile-steps > /tmp/p.json 2> /tmp/p.err
      python3 - $g $set $s <<'PY' >> "$OUT"/profile.txt
import json, sys
try:
    c = json.load(open("/tmp/p.json"))["cuda"]
    f = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["fwd"]["step_ms"])
    b = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["bwd"]["step_ms"])
    print(*sys.argv[1:], "fwdbwd %.4f" % c["fwdbwd_median_ms"], "| fwd %.4f:" % c["fwd"]["median_ms"], f,
          "| bwd %.4f:" % c["bwd"]["median_ms"], b)
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/p.err").read()[:300])
PY
    done
  done
done
cat "$OUT"/profile.txt
t reddit
python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy > /dev/null 2>&1
for set in gnnc_ops_bf16 gnnc_ops; do
  for s in 512 1024 2048 16384 512; do
    timeout 60 /tmp/bin/gnn-run $P/$set/max.mlir --graph=$G/reddit-like.npy --backend=cuda --split=$s \
      --grad --no-check --reps=10 --warmup=3 > /tmp/p.json 2> /tmp/p.err
    python3 - reddit-like $set $s <<'PY' >> "$OUT"/reddit.txt
import json, sys
try:
    c = json.load(open("/tmp/p.json"))["cuda"]
    print(*sys.argv[1:], "fwd %.3f" % c["fwd"]["median_ms"], "bwd %.3f" % c["bwd"]["median_ms"],
          "fwdbwd %.3f" % c["fwdbwd_median_ms"])
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/p.err").read()[:300])
PY
  done
done
rm -f $G/reddit-like.npy
cat "$OUT"/reddit.txt
t peers
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl > /tmp/pip.txt 2>&1
for dt in bfloat16 float32; do
  timeout 120 python3 $P/ops_bench.py --graphs arxiv-like,musae-github,blogcatalog --ops max \
    --impls turbo-gnn,pyg --dtype $dt --datasets $D >> "$OUT"/peers.jsonl 2>> "$OUT"/peers.err
done
cat "$OUT"/peers.jsonl | cut -c1-300
t done
