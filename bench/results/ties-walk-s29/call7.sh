#!/usr/bin/env bash
# Session 29 call 7 (final code, with vectors of 4 for winner codes): the
# bf16 forward+backward table (peers in bf16 and fp32, gnnc --grad); the
# max training step, HEAD's (51361c6) gnn-run against this tree's, two
# rounds; the CUDA tests of extrema and of SAGE max.
set -u
for v in gnn-run gnn-run-head; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
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
tag="\"kind\": \"grad\", \"dtype\": \"bfloat16\""
DTYPE=bfloat16 GNNC_OPS_FLAGS="--grad --no-check" timeout 150 bash $P/gnnc_ops.sh $B/bin/gnn-run $G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/qm9-batch4096.npy $G/arxiv-like.npy | sed "s/\"impl\": \"gnnc\"/\"impl\": \"gnnc\", $tag/" >> $R/gnnc.jsonl 2>> $R/log.txt
t ab
for round in 1 2; do for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do for v in gnn-run-head gnn-run; do
  timeout 30 $B/bin/$v $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=20 --warmup=5 > /tmp/a.json 2>>$R/log.txt
  python3 -c "
import json
c=json.load(open('/tmp/a.json'))['cuda']; print(json.dumps({'round': $round, 'bin': '$v', 'graph': '$g', 'fwdbwd_ms': c.get('fwdbwd_median_ms'), 'bwd_ms': c['bwd'].get('median_ms')}))" >> $R/ab.jsonl 2>>$R/log.txt
done; done; done
t checks
for g in pubmed musae-github blogcatalog qm9-batch4096; do
  timeout 60 $B/bin/gnn-run $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --backend=cuda --grad --reps=1 --warmup=0 > /tmp/c.json 2>&1; echo "max bf16 $g rc=$? $(grep -o '"match": [a-z]*' /tmp/c.json | sort | uniq -c | tr '\n' ' ')" >> $R/checks.txt
done
t pytest
GNNC_TEST_DEVICE=cuda timeout 150 python -m pytest -q -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py python/tests/test_nn.py python/tests/test_autocast.py -k "max or extremum or tie or min" > $R/pytest.txt 2>&1; echo "rc=$?" >> $R/pytest.txt
t done
