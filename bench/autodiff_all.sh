#!/usr/bin/env bash
# Every example's training step on the GPU against the reference evaluator,
# on every data set of a datasets folder: `gnn-run --grad --backend=cuda`
# (the runtime's training entry: the forward, then the backward on the
# residuals it left on the device), which compares the forward's outputs and
# every argument's gradient with the reference's (|gnnc - ref| <= 1e-4 *
# (1 + |ref|)). One job per (graph, example), JOBS at a time: the reference
# evaluator's backward, on the CPU, is the slow part (qm9's jobs may each
# hold up to ~25 GB of host memory, so run it with 4 jobs). Prints one line
# per job as it ends and a total "N passed, N failed". Needs a GPU.
#
#   bench/autodiff_all.sh GNN_RUN DATASETS [JOBS (default: nproc)]
#
# EXAMPLES (default: all eight) picks examples by name; GNN_RUN_FLAGS adds
# gnn-run flags to every run (e.g. "--split=32 --max-chunks=4").
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
run=$(realpath "$1"); datasets=$(realpath "$2")
jobs=${3:-$(nproc)}
out=$(mktemp -d)
export here run datasets out
read -r -a examples <<< "${EXAMPLES:-gcn sage_mean sage_max gin gat gatv2 transformer agnn}"
# One (graph, example) job: its line, and its error when it fails.
job() {
  local g=$1 e=$2
  local json="$out/$g.$e.json"
  "$run" "$here/examples/$e.mlir" --graph="$datasets/$g" --grad --backend=cuda \
    --reps=3 --warmup=1 ${GNN_RUN_FLAGS:-} > "$json" 2> "$out/$g.$e.err"
  local rc=$?
  python3 - "$json" "$g" "$e" "$rc" "$out/$g.$e.err" > "$out/$g.$e.txt" <<'PY'
import json, sys
path, g, e, rc, err = sys.argv[1:]
try:
    c = json.load(open(path))["cuda"]
except Exception:
    c = {}
ok = rc == "0" and c.get("match") is True
def fmt(v, f):
    return (f % v) if isinstance(v, (int, float)) else "-"
peak = c.get("peak_device_bytes")
print(f"{g:18s} {e:12s} {fmt(c.get('fwdbwd_median_ms'), '%.4f'):>10s} "
      f"{fmt(peak / 2**20 if peak is not None else None, '%.2f'):>10s} "
      f"{fmt(c.get('fwd', {}).get('worst_ratio_to_tolerance'), '%.3g'):>12s} "
      f"{fmt(c.get('bwd', {}).get('worst_ratio_to_tolerance'), '%.3g'):>12s}  "
      f"{'PASS' if ok else 'FAIL'}")
if not ok:
    print("  " + " ".join(open(err).read().split())[:400])
PY
  cat "$out/$g.$e.txt"
}
export -f job

printf '%-18s %-12s %10s %10s %12s %12s  %s\n' graph example "fwd+bwd ms" \
  "peak MiB" "fwd worst" "grad worst" result
for d in "$datasets"/*/; do
  [ -f "$d/meta.txt" ] || continue
  for e in "${examples[@]}"; do
    echo "$(basename "$d") $e"
  done
done | xargs -P "$jobs" -L 1 bash -c 'job "$0" "$1"'
cat "$out"/*.txt | awk '/ PASS$/ {p++} / FAIL$/ {f++} END {print p + 0 " passed, " f + 0 " failed"}'
rm -rf "$out"
