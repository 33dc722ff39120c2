#!/usr/bin/env bash
# Session 67, call 1 (one GPU): the bf16 max's backward pulled along the
# edges with (B) the share stored as bf16 instead of f32 and (C) that share
# read only where a lane's elements attain the extremum (masked loads),
# against (A) HEAD 251cdb9; forward+backward medians interleaved, A B C
# twice per graph; C's gradients checked against the reference (bf16 and
# f16) on the small graphs; arxiv-like's per-step profile (A, C); then both
# scoreboards with C (bench/scoreboard_both.sh); memcheck of C's max --grad.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in A B; do xz -dc .carry/bin/gnn-run-$v.xz > /tmp/gnn-run-$v; chmod +x /tmp/gnn-run-$v; done
xz -dc .carry/bin/gnn-run.xz > /tmp/gnn-run-C; chmod +x /tmp/gnn-run-C
source bench/gpu_setup.sh .carry "$OUT"
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > /tmp/dump.log 2>&1
t abc
for g in musae-github blogcatalog pubmed qm9-batch4096 arxiv-like; do
  for round in 1 2; do for v in A B C; do
    timeout 60 /tmp/gnn-run-$v $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --backend=cuda \
      --grad --no-check --reps=50 --warmup=10 > /tmp/o.json 2> /tmp/o.err
    python3 - $g $v $round <<'PY' >> "$OUT"/abc.txt
import json, sys
try:
    c = json.load(open("/tmp/o.json"))["cuda"]
    print(*sys.argv[1:], "fwd", c.get("median_ms"), "fwdbwd", c.get("fwdbwd_median_ms"))
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/o.err").read()[:300])
PY
  done; done
done
cat "$OUT"/abc.txt
t check
sed 's/bf16/f16/g' $P/gnnc_ops_bf16/max.mlir > /tmp/max_f16.mlir
for f in $P/gnnc_ops_bf16/max.mlir /tmp/max_f16.mlir; do
  for g in pubmed musae-github blogcatalog qm9-batch4096; do
    timeout 90 /tmp/gnn-run-C $f --graph=$G/$g.npy --backend=cuda --grad --reps=3 > /tmp/o.json 2> /tmp/o.err
    echo "== $f $g rc=$?" >> "$OUT"/check.txt
    python3 -c "
import json; c=json.load(open('/tmp/o.json'))
print({k: v for k, v in c.get('cuda', {}).items() if 'match' in k or 'err' in k or 'tol' in k})" >> "$OUT"/check.txt 2>&1
    grep -i error /tmp/o.err | head -3 >> "$OUT"/check.txt
  done
done
cat "$OUT"/check.txt
t profile
for v in A C; do
  timeout 60 /tmp/gnn-run-$v $P/gnnc_ops_bf16/max.mlir --graph=$G/arxiv-like.npy --backend=cuda \
    --grad --no-check --reps=20 --warmup=5 --profile-steps > /tmp/p.json 2> /tmp/p.err
  python3 - $v <<'PY' >> "$OUT"/profile.txt
import json, sys
c = json.load(open("/tmp/p.json"))["cuda"]
print(sys.argv[1], "fwd+bwd", c.get("fwdbwd_median_ms"))
print(json.dumps(c)[:6000])
PY
done
t scoreboard
timeout 300 bash bench/scoreboard_both.sh .carry /tmp/sb
cp /tmp/sb/tables.md /tmp/sb/out.tgz "$OUT"/
grep -E "^forward|^##|geomean" /tmp/sb/tables.md
t memcheck
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/gnn-run-C $P/gnnc_ops_bf16/max.mlir \
  --graph=$G/musae-github.npy --backend=cuda --grad --no-check --reps=1 --warmup=0 > /tmp/m.out 2>&1
echo "memcheck rc=$?" >> "$OUT"/check.txt; tail -3 /tmp/m.out >> "$OUT"/check.txt
t done
