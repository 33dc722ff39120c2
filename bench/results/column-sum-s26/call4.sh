#!/usr/bin/env bash
# Session 26, call 4: the scoreboard's forward+backward cases call 3 left
# out (its --grad run hit its limit on arxiv-like gt: that case and
# qm9-batch4096), with the peers on those two graphs again in this run;
# then nn_layers for every
# layer, HEAD 55f29a9 (A) against this tree (B) in one run.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/oldpy/gnnc /tmp/pkgA/; cp $B/py312-old/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
xz -dc .carry/bin/gr.xz > /tmp/gr; chmod +x /tmp/gr
P=.carry/peers; mkdir -p /tmp/graphs
t scoreboard
for g in arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D /tmp/graphs/$g.txt > /dev/null; done
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl > /dev/null 2>&1
timeout 120 python3 $P/ops_bench.py --graphs arxiv-like,qm9-batch4096 --impls cusparse,turbo-gnn --dtype float32 --datasets "$D" > $R/peers-rest.jsonl 2> $R/peers-rest.err
cp $P/gnnc_ops.sh /tmp/ops_gt.sh; sed -i 's/for op in spmm_sum spmm_unweighted max gatv2 gt; do/for op in ${OPS:-spmm_sum spmm_unweighted max gatv2 gt}; do/; s|here=$(dirname "$0")|here='"$(realpath $P)"'|' /tmp/ops_gt.sh
OPS=gt GNNC_OPS_FLAGS=--grad timeout 100 bash /tmp/ops_gt.sh /tmp/gr /tmp/graphs/arxiv-like.txt > $R/gnnc-grad-rest.jsonl
GNNC_OPS_FLAGS=--grad timeout 100 bash /tmp/ops_gt.sh /tmp/gr /tmp/graphs/qm9-batch4096.txt >> $R/gnnc-grad-rest.jsonl
python3 $P/side_by_side.py $R/gnnc-grad-rest.jsonl $R/peers-rest.jsonl > $R/table-grad-rest.md
cat $R/table-grad-rest.md
t layers
for s in A B; do
  run $s timeout 150 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --reps 20 > $R/layers-$s.txt 2>&1
done
for s in A B; do tail -12 $R/layers-$s.txt; done
t end
