#!/usr/bin/env bash
# Session 20 call 4 (final code): the backward's arithmetic marked
# gnn.rounds_on_store. Reference checks of every scoreboard op with --grad
# in bf16 (and GATv2 in f32) on the five graphs, CUDA tests of the half and
# attention paths and run-half in parallel; then the timings of one
# scoreboard run: peers in bf16 and fp32, gnnc's forward+backward in bf16
# and in fp32 (--no-check: checked above).
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; C=/tmp/check; mkdir -p $G $C
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
for g in ${graphs//,/ }; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $R/log.txt 2>&1
t checks
export B P G C
( for g in arxiv-like blogcatalog musae-github pubmed qm9-batch4096; do
    for op in gatv2 gt max spmm_sum spmm_unweighted; do echo "gnnc_ops_bf16 $g $op"; done; echo "gnnc_ops $g gatv2"
  done ) | xargs -P 12 -L 1 bash -c 'timeout 300 $B/bin/gnn-run $P/$0/$2.mlir --graph=$G/$1.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.$2.json 2> $C/$0.$1.$2.err; echo $? > $C/$0.$1.$2.rc' &
checks=$!
( timeout 200 bash test/Integration/run-half.sh "$B/bin/gnn-run" "$D" "powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2" > /tmp/half.txt 2>&1; echo "rc=$?" >> /tmp/half.txt ) &
half=$!
( GNNC_TEST_DEVICE=cuda timeout 240 python -m pytest -q -p no:cacheprovider python/tests/test_half.py python/tests/test_autocast.py python/tests/test_nn.py -k "gatv2 or GATv2 or agnn or AGNN or half or autocast or transformer or Transformer or gat or GAT or max" > /tmp/pytest.txt 2>&1; echo "rc=$?" >> /tmp/pytest.txt ) &
py=$!
wait $checks
python3 - $C > $R/checks.jsonl <<'PY'
import glob, json, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.rc")):
    base = p[:-3]; dset, graph, op = os.path.basename(base).split(".", 2)
    rec = {"set": dset, "graph": graph, "op": op, "rc": int(open(p).read())}
    try:
        cuda = json.load(open(base + ".json")).get("cuda", {})
        rec["match"] = cuda.get("match")
        for ph in ("fwd", "bwd"):
            if "worst_ratio_to_tolerance" in cuda.get(ph, {}):
                rec[ph + "_worst_over_tol"] = cuda[ph]["worst_ratio_to_tolerance"]
    except (ValueError, OSError):
        pass
    err = open(base + ".err").read().strip()
    if err:
        rec["error"] = err[-300:]
    print(json.dumps(rec))
PY
wait $half $py
cat /tmp/half.txt /tmp/pytest.txt > $R/tests.txt
t peers
timeout 60 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype bfloat16 --datasets $D > $R/peers-bf16.jsonl 2>> $R/log.txt
timeout 60 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype float32 --datasets $D > $R/peers-fp32.jsonl 2>> $R/log.txt
t gnnc
files="$G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/arxiv-like.npy $G/qm9-batch4096.npy"
DTYPE=bfloat16 GNNC_OPS_FLAGS="--grad --no-check" timeout 90 bash $P/gnnc_ops.sh $B/bin/gnn-run $files > $R/grad-gnnc.jsonl 2>> $R/log.txt
GNNC_OPS_FLAGS="--grad --no-check" timeout 90 bash $P/gnnc_ops.sh $B/bin/gnn-run $files | sed 's/"impl": "gnnc"/"impl": "gnnc", "dtype": "float32"/' >> $R/grad-gnnc.jsonl 2>> $R/log.txt
t done
