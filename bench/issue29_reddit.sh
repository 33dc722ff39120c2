#!/usr/bin/env bash
# Issue 29's reddit-like table in one GPU call: the 114.6M-edge reddit-like
# graph (../shared/bench/peers/graphs.py), the peers (cuSPARSE, turbo-gnn;
# ops_bench.py) in fp32 and bf16, gnnc (gnn-run, --no-check: the reference
# would take hours there) forward of spmm_sum, gatv2 and gt in f32 and bf16,
# and the weighted SpMM's forward+backward (--grad) in both. Then
#   table-fp32.md   gnnc f32 against the fp32 peers
#   table-bf16.md   gnnc bf16 against each peer's faster precision
#   own.md          gnnc's f32 time over its bf16 time, per op and pass
# Run from the repository root on the GPU machine:
#   bench/issue29_reddit.sh CARRY OUT
# CARRY holds gnn-run (as CARRY/gnn-run, CARRY/bin/gnn-run or
# CARRY/bin/gnn-run.xz), peers/ (a copy of ../shared/bench/peers),
# datasets/ and py312/ (bench/gpu_setup.sh). REPS (default 10) timed runs
# after 3 warm-ups per gnnc case; DTYPES (default "float32 bfloat16") the
# precisions; GRAD_OPS (default spmm_sum) the ops also timed with --grad.
set -u
RUN=$1/gnn-run
if [ ! -x "$RUN" ]; then
  RUN=$1/bin/gnn-run
  [ -x "$RUN" ] || { xz -dc "$1"/bin/gnn-run.xz > "$RUN"; chmod +x "$RUN"; }
fi
RUN=$(realpath "$RUN")
source bench/gpu_setup.sh "$1" "$2"
P=$B/peers; W=/tmp/i29; mkdir -p $W
python3 -c "import turbo_gnn" 2>/dev/null ||
  python3 -m pip install -q --no-deps $P/turbo_gnn-*-cp312-*.whl > $W/pip.txt 2>&1
t peers
DTYPES=${DTYPES:-float32 bfloat16}
for dt in $DTYPES; do
  timeout ${PEER_T:-240} python3 $P/ops_bench.py --graphs reddit-like --ops spmm-sum,gatv2,gt \
    --impls cusparse,turbo-gnn --dtype $dt --datasets $D > $R/peers-$dt.jsonl 2> $W/peers-$dt.err
  echo "peers $dt rc=$?" >> $R/progress.txt
done
t dump
g=$W/reddit-like.npy
python3 $P/dump_graph.py reddit-like $D $g > $W/dump.txt 2>&1
t gnnc
for dt in $DTYPES; do
  set_dir=gnnc_ops; [ $dt = bfloat16 ] && set_dir=gnnc_ops_bf16
  for flags in "--no-check" "--grad --no-check"; do
    for op in spmm_sum gatv2 gt; do
      [ "$flags" != "--no-check" ] && [[ " ${GRAD_OPS:-spmm_sum} " != *" $op "* ]] && continue
      timeout 120 $RUN $P/$set_dir/$op.mlir --graph=$g --backend=cuda \
        --reps=${REPS:-10} --warmup=3 $flags > $W/r.json 2> $W/r.err
      rc=$? python3 - $op "$flags" $dt $W/r.json $W/r.err <<'PY'
import json, os, sys
op, flags, dt, out, err = sys.argv[1:6]
rec = {"graph": "reddit-like", "op": op, "impl": "gnnc", "dtype": dt,
       "rc": int(os.environ["rc"]), "fwd_ms": None, "match": "not checked"}
try:
    c = json.load(open(out))["cuda"]
    if "--grad" in flags:
        rec.update(fwdbwd_ms=c.get("fwdbwd_median_ms"), peak_mb=c.get("peak_device_bytes", 0) / 2**20)
    else:
        rec.update(fwd_ms=c.get("median_ms"), peak_mb=c.get("peak_device_bytes", 0) / 2**20)
except Exception as e:
    rec["error"] = (repr(e) + " " + open(err).read())[:300]
print(json.dumps(rec), flush=True)
PY
    done
  done >> $R/gnnc-$dt.jsonl
done
rm -f $g
t tables
[ -f $R/gnnc-float32.jsonl ] &&
  python3 $P/side_by_side.py $R/gnnc-float32.jsonl $R/peers-float32.jsonl > $R/table-fp32.md 2>&1
[ -f $R/gnnc-bfloat16.jsonl ] &&
  python3 $P/side_by_side.py $R/gnnc-bfloat16.jsonl $R/peers-bfloat16.jsonl \
    $(ls $R/peers-float32.jsonl 2>/dev/null) > $R/table-bf16.md 2>&1
python3 - $R <<'PY' > $R/own.md
import json, sys
r = sys.argv[1]
rows = {}
for dt in ("float32", "bfloat16"):
    try:
        lines = open(f"{r}/gnnc-{dt}.jsonl").readlines()
    except FileNotFoundError:
        continue
    for line in lines:
        rec = json.loads(line)
        for k in ("fwd_ms", "fwdbwd_ms"):
            if rec.get(k):
                rows.setdefault((rec["op"], k), {})[dt] = rec[k]
print("| op | pass | f32 ms | bf16 ms | f32 / bf16 |\n|---|---|---:|---:|---:|")
for (op, k), v in rows.items():
    f, b = v.get("float32"), v.get("bfloat16")
    ratio = f"{f / b:.2f}x" if f and b else "-"
    print(f"| {op} | {'forward' if k == 'fwd_ms' else 'forward+backward'} | "
          f"{f if f else '-'} | {b if b else '-'} | {ratio} |")
PY
t done
