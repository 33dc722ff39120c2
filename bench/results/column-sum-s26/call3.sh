#!/usr/bin/env bash
# Session 26, call 3: the op-level scoreboard (../shared/bench/peers, carried
# as .carry/peers) with this tree's gnn-run: the peers once (fp32), gnnc's
# side forward and with --grad (forward+backward), two tables.
set -u
export PATH=/usr/local/cuda/bin:$PATH
R=$(realpath -m "$OUT"); mkdir -p $R/graphs
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $R/device.txt
xz -dc .carry/bin/gr.xz > /tmp/gr; chmod +x /tmp/gr
P=.carry/peers; D=$(realpath .carry/datasets)
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl > /dev/null 2>&1
echo "peers $(date +%T)" >> $R/progress.txt
timeout 200 python3 $P/ops_bench.py --graphs "$graphs" --impls cusparse,turbo-gnn --dtype float32 --datasets "$D" > $R/peers.jsonl 2> $R/peers.err
files=()
for g in ${graphs//,/ }; do
  f=$R/graphs/$g.txt; python3 $P/dump_graph.py "$g" "$D" "$f" > /dev/null && files+=("$f")
done
echo "gnnc fwd $(date +%T)" >> $R/progress.txt
timeout 120 bash $P/gnnc_ops.sh /tmp/gr "${files[@]}" > $R/gnnc.jsonl
python3 $P/side_by_side.py $R/gnnc.jsonl $R/peers.jsonl > $R/table.md
echo "gnnc grad $(date +%T)" >> $R/progress.txt
GNNC_OPS_FLAGS=--grad timeout 220 bash $P/gnnc_ops.sh /tmp/gr "${files[@]}" > $R/gnnc-grad.jsonl
python3 $P/side_by_side.py $R/gnnc-grad.jsonl $R/peers.jsonl > $R/table-grad.md
rm -rf $R/graphs
echo "end $(date +%T)" >> $R/progress.txt
cat $R/table.md | tail -12; cat $R/table-grad.md | tail -14
