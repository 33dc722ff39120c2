#!/usr/bin/env bash
# Session 21 call 1 (69e32c9; "gnn-run-old" = 26e7031): sddmm dot products split among a team of lanes with
# 16-byte vectors (the weighted spmm's edge-weight gradient). Checks of
# spmm_sum --grad (bf16, f32) on the five scoreboard graphs and the CUDA
# tests of sddmm/spmm ops, in parallel; then old (26e7031) / new timings of
# spmm_sum --grad, two interleaved rounds, and reddit-like with cuSPARSE.
set -u
for v in gnn-run gnn-run-old; do xz -dc .carry/bin/$v.xz > .carry/bin/$v; chmod +x .carry/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; C=/tmp/check; mkdir -p $G $C
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
( GNNC_TEST_DEVICE=cuda timeout 250 python -m pytest -q -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py python/tests/test_autodiff.py -k "sddmm or spmm or gcn or GCN" > /tmp/pytest.txt 2>&1; echo "rc=$?" >> /tmp/pytest.txt ) &
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
wait $py
cp /tmp/pytest.txt $R/tests.txt
t ab
for round in 1 2; do
  for g in ${graphs//,/ }; do for set in gnnc_ops_bf16 gnnc_ops; do for v in gnn-run-old gnn-run; do
    timeout 60 $B/bin/$v $P/$set/spmm_sum.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=50 --warmup=10 --profile-steps > /tmp/ab.json 2>/dev/null
    python3 - $round $g $set $v <<'PY' >> $R/ab.jsonl
import json, sys
rnd, g, s, v = sys.argv[1:]
try:
    c = json.load(open("/tmp/ab.json"))["cuda"]
    print(json.dumps({"round": int(rnd), "graph": g, "set": s, "build": v, "fwd_ms": c.get("median_ms"),
                      "fwdbwd_ms": c.get("fwdbwd_median_ms"), "steps": c.get("step_ms"), "bwd_steps": c.get("bwd_step_ms")}))
except Exception as e:
    print(json.dumps({"round": int(rnd), "graph": g, "set": s, "build": v, "error": repr(e)}))
PY
  done; done; done
done
t reddit
python3 $P/dump_graph.py reddit-like $D $G/reddit-like.npy >> $R/log.txt 2>&1
for set in gnnc_ops gnnc_ops_bf16; do for v in gnn-run-old gnn-run; do
  timeout 120 $B/bin/$v $P/$set/spmm_sum.mlir --graph=$G/reddit-like.npy --backend=cuda --grad --no-check --reps=10 --warmup=3 --profile-steps > /tmp/ab.json 2>>$R/log.txt
  python3 - $set $v <<'PY' >> $R/ab.jsonl
import json, sys
s, v = sys.argv[1:]
try:
    c = json.load(open("/tmp/ab.json"))["cuda"]
    print(json.dumps({"graph": "reddit-like", "set": s, "build": v, "fwd_ms": c.get("median_ms"),
                      "fwdbwd_ms": c.get("fwdbwd_median_ms"), "steps": c.get("step_ms"), "bwd_steps": c.get("bwd_step_ms")}))
except Exception as e:
    print(json.dumps({"graph": "reddit-like", "set": s, "build": v, "error": repr(e)}))
PY
done; done
t peers
timeout 100 python3 $P/ops_bench.py --graphs reddit-like,arxiv-like --ops spmm-sum --impls cusparse --dtype float32 --datasets $D > $R/peers.jsonl 2>> $R/log.txt
timeout 100 python3 $P/ops_bench.py --graphs reddit-like,arxiv-like --ops spmm-sum --impls cusparse --dtype bfloat16 --datasets $D >> $R/peers.jsonl 2>> $R/log.txt
t done
