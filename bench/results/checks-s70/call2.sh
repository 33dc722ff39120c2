#!/usr/bin/env bash
# Session 70, call 2 (one GPU), HEAD's gnn-run and module (01dba22's
# kernels): the bf16 tests on CUDA that call 4 of session 69 found failing
# (their tolerance, fixed in 01dba22), then the bf16 op scoreboard, forward+
# backward first (peers in bf16 and fp32, gnnc bf16 --grad; tables by
# side_by_side.py), then forward. Cut where the device time ends: each part
# writes its outputs as it goes.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
t tests
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 60 python3 -m pytest -q -p no:cacheprovider \
  -k "extremum or winner or (max and (bf16 or bfloat16 or half or float16))" > "$OUT"/pytest.txt 2>&1
 echo "exit $?" >> "$OUT"/pytest.txt)
P=$B/peers; G=/tmp/graphs; W=$R/w; mkdir -p $G $W
t dump
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $W/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $W/log.txt 2>&1
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
t peers
timeout 120 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype bfloat16 --datasets $D > $W/peers-bf16.jsonl 2>> $W/log.txt
timeout 120 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype float32 --datasets $D > $W/peers-fp32.jsonl 2>> $W/log.txt
small="$G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/qm9-batch4096.npy"
t grad
DTYPE=bfloat16 GNNC_OPS_FLAGS="--grad --no-check" timeout 100 bash $P/gnnc_ops.sh $B/bin/gnn-run $small $G/arxiv-like.npy > $W/gnnc-grad-bfloat16.jsonl 2>> $W/log.txt
echo "## bf16 grad (gnnc bf16 / each peer's faster precision)" >> $R/tables.md
python3 $P/side_by_side.py $W/gnnc-grad-bfloat16.jsonl $W/peers-bf16.jsonl $W/peers-fp32.jsonl >> $R/tables.md 2>&1
t fwd
DTYPE=bfloat16 timeout 100 bash $P/gnnc_ops.sh $B/bin/gnn-run $small > $W/gnnc-fwd-bfloat16.jsonl 2>> $W/log.txt
DTYPE=bfloat16 GNNC_OPS_FLAGS="--no-check" timeout 40 bash $P/gnnc_ops.sh $B/bin/gnn-run $G/arxiv-like.npy >> $W/gnnc-fwd-bfloat16.jsonl 2>> $W/log.txt
echo "## bf16 fwd (gnnc bf16 / each peer's faster precision)" >> $R/tables.md
python3 $P/side_by_side.py $W/gnnc-fwd-bfloat16.jsonl $W/peers-bf16.jsonl $W/peers-fp32.jsonl >> $R/tables.md 2>&1
t done
tail -3 $R/pytest.txt; cat $R/tables.md
