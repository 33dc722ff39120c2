#!/usr/bin/env bash
# Both op-level scoreboards in one GPU call (the recipe of session 29's call
# 5): peers (cuSPARSE, turbo-gnn) in bf16 and fp32; gnnc's forward (checked
# against the reference on the four small graphs, arxiv-like --no-check)
# and forward+backward (--grad --no-check), bf16 and f32; tables by
# side_by_side.py (bf16 gnnc against each peer's faster precision, f32 gnnc
# against the fp32 peers). Run from the repository root on the GPU machine:
#   bench/scoreboard_both.sh CARRY OUT
# CARRY holds bin/gnn-run.xz, peers/ (../shared/bench/peers), datasets/ and
# py312/ (bench/gpu_setup.sh). Outputs: OUT/tables.md, OUT/out.tgz (the
# JSON lines and logs), OUT/progress.txt.
set -u
xz -dc "$1"/bin/gnn-run.xz > "$1"/bin/gnn-run; chmod +x "$1"/bin/gnn-run
source bench/gpu_setup.sh "$1" "$2"
P=$B/peers; G=/tmp/graphs; W=/tmp/w; mkdir -p $G $W
t dump
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $W/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $W/log.txt 2>&1
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
t peers
timeout 120 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype bfloat16 --datasets $D > $W/peers-bf16.jsonl 2>> $W/log.txt
timeout 120 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype float32 --datasets $D > $W/peers-fp32.jsonl 2>> $W/log.txt
t gnnc
small="$G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/qm9-batch4096.npy"
for dt in bfloat16 float32; do
  DTYPE=$dt timeout 100 bash $P/gnnc_ops.sh $B/bin/gnn-run $small > $W/gnnc-fwd-$dt.jsonl 2>> $W/log.txt
  DTYPE=$dt GNNC_OPS_FLAGS="--no-check" timeout 40 bash $P/gnnc_ops.sh $B/bin/gnn-run $G/arxiv-like.npy >> $W/gnnc-fwd-$dt.jsonl 2>> $W/log.txt
  DTYPE=$dt GNNC_OPS_FLAGS="--grad --no-check" timeout 100 bash $P/gnnc_ops.sh $B/bin/gnn-run $small $G/arxiv-like.npy > $W/gnnc-grad-$dt.jsonl 2>> $W/log.txt
done
t tables
S=$R/tables.md
for k in fwd grad; do
  echo "## bf16 $k (gnnc bf16 / each peer's faster precision)" >> $S
  python3 $P/side_by_side.py $W/gnnc-$k-bfloat16.jsonl $W/peers-bf16.jsonl $W/peers-fp32.jsonl >> $S 2>&1
  echo "## fp32 $k (gnnc f32 / fp32 peers)" >> $S
  python3 $P/side_by_side.py $W/gnnc-$k-float32.jsonl $W/peers-fp32.jsonl >> $S 2>&1
done
t done
cp $R/progress.txt $W/; tar czf $R/out.tgz -C $W .
