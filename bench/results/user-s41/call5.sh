#!/usr/bin/env bash
# Call 5: the fp32 scoreboard at the final code (../shared/bench/peers/run.sh:
# peers and gnnc forward in one run), then gnnc's side again with --grad
# against the same peers' file (forward+backward), as session 34's call 4.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
t scoreboard
DATASETS=$D OUT=$R/sb timeout 240 bash $B/peers/run.sh $B/bin/gnn-run > $R/sb.txt 2>&1; tail -40 $R/sb.txt
t grad
P=$B/peers; G=/tmp/graphs; mkdir -p $G; files=()
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
  python3 $P/dump_graph.py $g $D $G/$g.txt > /dev/null && files+=($G/$g.txt); done
GNNC_OPS_FLAGS=--grad timeout 170 bash $P/gnnc_ops.sh $B/bin/gnn-run "${files[@]}" > $R/gnnc-grad.jsonl 2> $R/grad.err
python3 $P/side_by_side.py $R/gnnc-grad.jsonl $R/sb/peers.jsonl > $R/table-grad.md 2>&1; tail -40 $R/table-grad.md
t end
cd $R && tar czf sb.tgz sb && rm -rf sb
