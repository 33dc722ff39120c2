#!/usr/bin/env bash
# Interleaved A/B of forward + backward (gnn-run --grad) under two sets of
# gnn-run flags, over the scoreboard's ops and graphs: ROUNDS rounds of A then
# B per (graph, op), each a median of CUDA-event timings after warm-up, with
# the backward's per-step medians (--profile-steps). One line per case: the
# better fwd+bwd median of each side, A/B, both training peaks (MiB) and
# whether B's gradients match the reference (arxiv-like and larger graphs
# run --no-check, like the scoreboard). Needs a GPU and the peers' bench
# folder (graphs dumped by dump_graph.py).
#
#   [RUN_B=OTHER_GNN_RUN] bench/grad_ab.sh GNN_RUN PEERS_DIR DATASETS "FLAGS_A" "FLAGS_B" \
#       [GRAPHS (default pubmed,blogcatalog,musae-github,arxiv-like)] [OPS] [ROUNDS]
#
# With RUN_B set, side B runs that binary (two builds compared, same flags
# or not).
set -u
run="$1"; peers="$2"; datasets="$3"; flags_a="$4"; flags_b="$5"
run_b="${RUN_B:-$run}"
graphs="${6:-pubmed,blogcatalog,musae-github,arxiv-like}"
ops="${7:-spmm_sum,spmm_unweighted,max,gatv2,gt}"
rounds="${8:-2}"
tmp=$(mktemp -d)
for g in ${graphs//,/ }; do
  python3 "$peers/dump_graph.py" "$g" "$datasets" "$tmp/$g.txt" > /dev/null
done
for g in ${graphs//,/ }; do
  check=""
  [ "$(wc -l < "$tmp/$g.txt")" -gt 1000000 ] && check="--no-check"
  for op in ${ops//,/ }; do
    for i in $(seq "$rounds"); do
      for side in A B; do
        flags="$flags_a"; bin="$run"
        [ "$side" = B ] && flags="$flags_b" && bin="$run_b"
        # shellcheck disable=SC2086
        "$bin" "$peers/gnnc_ops/$op.mlir" --graph="$tmp/$g.txt" --backend=cuda \
          --grad --reps=50 --warmup=10 --profile-steps $check $flags \
          > "$tmp/out.json" 2> "$tmp/err.txt"
        python3 - "$g" "$op" "$side" "$tmp/out.json" "$tmp/err.txt" <<'PY'
import json, sys
g, op, side, out, err = sys.argv[1:6]
try:
    c = json.load(open(out))["cuda"]
except Exception:
    print(json.dumps({"graph": g, "op": op, "side": side,
                      "error": open(err).read()[-300:]}))
    sys.exit()
steps = {s["step"]: round(s["median_ms"], 4) for s in c["bwd"].get("step_ms", [])}
print(json.dumps({"graph": g, "op": op, "side": side,
                  "fwdbwd_ms": c["fwdbwd_median_ms"],
                  "peak_mb": c["peak_device_bytes"] / 2**20,
                  "match": c.get("match", "not checked"), "bwd_steps": steps}))
PY
      done
    done
  done
done | tee "$tmp/ab.jsonl"
# (Each case's lines are printed as it ends, so a run cut short keeps them.)
python3 - "$tmp/ab.jsonl" "$flags_a" "$flags_b" <<'PY'
import json, sys
path, fa, fb = sys.argv[1:4]
res = {}
for line in open(path):
    r = json.loads(line)
    res.setdefault((r["graph"], r["op"]), {}).setdefault(r["side"], []).append(r)
print(f"A: {fa or '(none)'}   B: {fb or '(none)'}")
for (g, op), v in res.items():
    if any("error" in r for s in v.values() for r in s) or len(v) < 2:
        print(f"{g:14s} {op:16s} failed")
        continue
    a = min(v["A"], key=lambda r: r["fwdbwd_ms"])
    b = min(v["B"], key=lambda r: r["fwdbwd_ms"])
    print(f"{g:14s} {op:16s} A {a['fwdbwd_ms']:.4f} B {b['fwdbwd_ms']:.4f} "
          f"A/B {a['fwdbwd_ms'] / b['fwdbwd_ms']:.3f} | MiB A {a['peak_mb']:.3f} "
          f"B {b['peak_mb']:.3f} | B match {b['match']}")
PY
rm -rf "$tmp"
