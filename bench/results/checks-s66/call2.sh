#!/usr/bin/env bash
# Session 66, call 2 (one GPU): both op-level scoreboards
# (bench/scoreboard_both.sh: gnnc's forward checked against the reference
# on the four small graphs, arxiv-like and --grad with --no-check), then the
# per-step profile of arxiv-like's bf16 and f32 max --grad (issue 29's worst
# bf16 case in session 56).
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
timeout 420 bash bench/scoreboard_both.sh .carry /tmp/sb
cp /tmp/sb/tables.md /tmp/sb/out.tgz /tmp/sb/progress.txt "$OUT"/
grep -E "^forward|^##" /tmp/sb/tables.md
P=.carry/peers
for set in gnnc_ops_bf16 gnnc_ops; do
  timeout 60 .carry/bin/gnn-run $P/$set/max.mlir --graph=/tmp/graphs/arxiv-like.npy --backend=cuda \
    --grad --no-check --reps=20 --warmup=5 --profile-steps > /tmp/p.json 2> /tmp/p.err
  python3 - $set <<'PY' >> "$OUT"/max-profile.txt
import json, sys
c = json.load(open("/tmp/p.json"))["cuda"]
print(sys.argv[1], "fwd+bwd", c.get("fwdbwd_median_ms"))
print(json.dumps(c)[:4000])
PY
done
cat "$OUT"/max-profile.txt
