#!/usr/bin/env bash
# Session 22 call 5 (final code): one scoreboard run. Peers (cuSPARSE,
# turbo-gnn) in bf16 and fp32; gnnc's forward in bf16 and f32 (checked
# against the reference on the four small graphs, arxiv-like --no-check)
# and forward+backward (--grad --no-check); then --grad with the reference
# check for gatv2 and gt in bf16 on the four small graphs.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G
t dump
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $R/log.txt 2>&1
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
t peers
timeout 120 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype bfloat16 --datasets $D > $R/peers.jsonl 2>> $R/log.txt
timeout 120 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype float32 --datasets $D | sed 's/"impl"/"dtype": "float32", "impl"/' >> $R/peers.jsonl 2>> $R/log.txt
t gnnc
small="$G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/qm9-batch4096.npy"
for dt in bfloat16 float32; do
  tag="\"kind\": \"fwd\", \"dtype\": \"$dt\""
  DTYPE=$dt timeout 150 bash $P/gnnc_ops.sh $B/bin/gnn-run $small | sed "s/\"impl\": \"gnnc\"/\"impl\": \"gnnc\", $tag/" >> $R/gnnc.jsonl 2>> $R/log.txt
  DTYPE=$dt GNNC_OPS_FLAGS="--no-check" timeout 60 bash $P/gnnc_ops.sh $B/bin/gnn-run $G/arxiv-like.npy | sed "s/\"impl\": \"gnnc\"/\"impl\": \"gnnc\", $tag/" >> $R/gnnc.jsonl 2>> $R/log.txt
  tag="\"kind\": \"grad\", \"dtype\": \"$dt\""
  DTYPE=$dt GNNC_OPS_FLAGS="--grad --no-check" timeout 150 bash $P/gnnc_ops.sh $B/bin/gnn-run $small $G/arxiv-like.npy | sed "s/\"impl\": \"gnnc\"/\"impl\": \"gnnc\", $tag/" >> $R/gnnc.jsonl 2>> $R/log.txt
done
t gradchecks
for g in pubmed musae-github blogcatalog qm9-batch4096; do for op in gatv2 gt; do
  timeout 60 $B/bin/gnn-run $P/gnnc_ops_bf16/$op.mlir --graph=$G/$g.npy --backend=cuda --grad --reps=1 --warmup=0 > /tmp/c.json 2>>$R/log.txt
  python3 - /tmp/c.json $g $op >> $R/gradchecks.jsonl <<'PY'
import json, sys
f, g, op = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"graph": g, "op": op, "dtype": "bf16", "match": c.get("match"),
                      "fwd_worst_over_tol": c.get("fwd", {}).get("worst_ratio_to_tolerance"),
                      "bwd_worst_over_tol": c.get("bwd", {}).get("worst_ratio_to_tolerance")}))
except Exception as e:
    print(json.dumps({"graph": g, "op": op, "error": repr(e)}))
PY
done; done
t done
