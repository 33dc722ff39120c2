#!/usr/bin/env bash
# Session 20 call 2: the bf16 scoreboard in one run. run.sh's parts, with
# gnnc's reference checks (forward and --grad, 50 cases) run first in
# parallel, then every timing sequentially: the peers in bf16, gnnc's
# forward and forward+backward (--no-check: checked above), the peers in fp32.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; C=/tmp/check; mkdir -p $G $C
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
t graphs
for g in ${graphs//,/ }; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $R/log.txt 2>&1
t checks
export B P G C
( for g in arxiv-like blogcatalog musae-github pubmed qm9-batch4096; do
    for op in gatv2 gt max spmm_sum spmm_unweighted; do echo "--grad $g $op"; echo "--forward $g $op"; done
  done ) | xargs -P 13 -L 1 bash -c 'f=$0; [ $f = --forward ] && f=; timeout 400 $B/bin/gnn-run $P/gnnc_ops_bf16/$2.mlir --graph=$G/$1.npy --backend=cuda $f --reps=1 --warmup=0 > $C/$0.$1.$2.json 2> $C/$0.$1.$2.err; echo $? > $C/$0.$1.$2.rc'
python3 - $C > $R/checks.jsonl <<'PY'
import glob, json, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.rc")):
    base = p[:-3]; mode, graph, op = os.path.basename(base).split(".", 2)
    rec = {"mode": mode, "graph": graph, "op": op, "rc": int(open(p).read())}
    try:
        cuda = json.load(open(base + ".json")).get("cuda", {})
        rec["match"] = cuda.get("match")
        for ph in ("fwd", "bwd"):
            if ph in cuda and "worst_ratio_to_tolerance" in cuda[ph]:
                rec[ph + "_worst_over_tol"] = cuda[ph]["worst_ratio_to_tolerance"]
        if "worst_ratio_to_tolerance" in cuda:
            rec["worst_over_tol"] = cuda["worst_ratio_to_tolerance"]
    except (ValueError, OSError):
        pass
    err = open(base + ".err").read().strip()
    if err:
        rec["error"] = err[-300:]
    print(json.dumps(rec))
PY
t peers-bf16
timeout 200 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype bfloat16 --datasets $D > $R/peers-bf16.jsonl 2>> $R/log.txt
t gnnc-forward
DTYPE=bfloat16 GNNC_OPS_FLAGS=--no-check timeout 90 bash $P/gnnc_ops.sh $B/bin/gnn-run $G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/arxiv-like.npy $G/qm9-batch4096.npy > $R/forward-gnnc-bf16.jsonl 2>> $R/log.txt
t gnnc-grad
DTYPE=bfloat16 GNNC_OPS_FLAGS="--grad --no-check" timeout 90 bash $P/gnnc_ops.sh $B/bin/gnn-run $G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/arxiv-like.npy $G/qm9-batch4096.npy > $R/grad-gnnc-bf16.jsonl 2>> $R/log.txt
t peers-fp32
[ $SECONDS -lt 470 ] && timeout $((560 - SECONDS)) python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype float32 --datasets $D > $R/peers-fp32.jsonl 2>> $R/log.txt
t done
