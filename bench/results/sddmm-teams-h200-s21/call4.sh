#!/usr/bin/env bash
# Session 21 call 4 (final code, 74ed5cc): reference checks of spmm_sum
# --grad (bf16, f32) on the five scoreboard graphs, compute-sanitizer on the
# sddmm teams (half_ops spmm_weighted and sddmm_dot --grad, f32/bf16/f16)
# and the CUDA tests of test_core/test_half, in parallel; then one
# scoreboard run of forward+backward (peers bf16 and fp32, gnnc bf16 and
# fp32 --grad --no-check), and reddit-like spmm_sum --grad against cuSPARSE;
# last, 8 vectors per lane on reddit-like with the experiment build.
set -u
for v in gnn-run gnn-run-exp; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; C=/tmp/check; S=/tmp/san; mkdir -p $G $C $S
graphs=pubmed,musae-github,blogcatalog,arxiv-like,qm9-batch4096
t dump
for g in ${graphs//,/ }; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
python3 -c "import turbo_gnn" 2>/dev/null || python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl >> $R/log.txt 2>&1
t checks
export B P G C
( for g in arxiv-like blogcatalog musae-github pubmed qm9-batch4096; do
    echo "gnnc_ops_bf16 $g spmm_sum"; echo "gnnc_ops $g spmm_sum"
  done ) | xargs -P 10 -L 1 bash -c 'timeout 280 $B/bin/gnn-run $P/$0/$2.mlir --graph=$G/$1.npy --backend=cuda --grad --reps=1 --warmup=0 > $C/$0.$1.$2.json 2> $C/$0.$1.$2.err; echo $? > $C/$0.$1.$2.rc' &
checks=$!
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
( for ty in f32 bf16 f16; do sed "s/f32/$ty/g" test/Integration/Inputs/half_ops.mlir > /tmp/ops-$ty.mlir
  for tool in memcheck racecheck; do for fn in spmm_weighted sddmm_dot; do for ch in 8192 4; do
    out=$(timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B/bin/gnn-run /tmp/ops-$ty.mlir --function=$fn --graph="$pl" --backend=cuda --grad --max-chunks=$ch --reps=1 --warmup=0 2>&1); rc=$?
    m=$(printf '%s' "$out" | grep -c '"match": true'); s=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    echo "$ty $tool $ch $fn rc=$rc match_lines=$m $s"
  done; done; done; done > $S/sanitize.txt 2>&1 ) &
san=$!
( GNNC_TEST_DEVICE=cuda timeout 300 python -m pytest -q -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py > /tmp/pytest.txt 2>&1; echo "rc=$?" >> /tmp/pytest.txt ) &
py=$!
python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $R/log.txt 2>&1
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
wait $san $py
{ cat $S/sanitize.txt; tail -4 /tmp/pytest.txt; } > $R/tests.txt
t peers
timeout 60 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype bfloat16 --datasets $D > $R/peers.jsonl 2>> $R/log.txt
timeout 60 python3 $P/ops_bench.py --graphs $graphs --impls cusparse,turbo-gnn --dtype float32 --datasets $D >> $R/peers.jsonl 2>> $R/log.txt
t gnnc
files="$G/pubmed.npy $G/musae-github.npy $G/blogcatalog.npy $G/arxiv-like.npy $G/qm9-batch4096.npy"
DTYPE=bfloat16 GNNC_OPS_FLAGS="--grad --no-check" timeout 100 bash $P/gnnc_ops.sh $B/bin/gnn-run $files > $R/grad-gnnc.jsonl 2>> $R/log.txt
GNNC_OPS_FLAGS="--grad --no-check" timeout 100 bash $P/gnnc_ops.sh $B/bin/gnn-run $files | sed 's/"impl": "gnnc"/"impl": "gnnc", "dtype": "float32"/' >> $R/grad-gnnc.jsonl 2>> $R/log.txt
t reddit
rrun() { # BINARY SET LABEL [ENV]
  env $4 GNNC_CACHE_DIR=/tmp/gk-$3 timeout 120 $B/bin/$1 $P/$2/spmm_sum.mlir --graph=$G/reddit-like.npy --backend=cuda --grad --no-check --reps=10 --warmup=3 --profile-steps > /tmp/r.json 2>>$R/log.txt
  python3 - /tmp/r.json $2 $3 >> $R/reddit.jsonl <<'PY'
import json, sys
f, s, label = sys.argv[1:]
try:
    c = json.load(open(f))["cuda"]
    print(json.dumps({"graph": "reddit-like", "set": s, "build": label, "fwdbwd_ms": c.get("fwdbwd_median_ms"), "fwd_ms": c["fwd"].get("median_ms"),
                      "bwd_ms": c["bwd"].get("median_ms"), "fwd_steps": c["fwd"].get("step_ms"), "bwd_steps": c["bwd"].get("step_ms")}))
except Exception as e:
    print(json.dumps({"graph": "reddit-like", "set": s, "build": label, "error": repr(e)}))
PY
}
mkdir -p -m 700 /tmp/gk-final /tmp/gk-exp8
for set in gnnc_ops gnnc_ops_bf16; do rrun gnn-run $set final GNNC_X=0; done
timeout 100 python3 $P/ops_bench.py --graphs reddit-like --ops spmm-sum --impls cusparse --dtype float32 --datasets $D > $R/reddit-peers.jsonl 2>> $R/log.txt
timeout 100 python3 $P/ops_bench.py --graphs reddit-like --ops spmm-sum --impls cusparse --dtype bfloat16 --datasets $D >> $R/reddit-peers.jsonl 2>> $R/log.txt
t exp8
for set in gnnc_ops gnnc_ops_bf16; do rrun gnn-run-exp $set exp8 GNNC_EXP_VPL=8; done
t done
