#!/usr/bin/env bash
# Derives every example's forward and backward functions with gnn-autodiff
# (every tensor argument differentiable) and runs both with the cuda backend
# on each graph against the reference evaluator (gnn-run checks each result,
# |gnnc - ref| <= 1e-4 * (1 + |ref|)). The backward runs on the residuals the
# forward produced (its results beyond @f's own) and seeded output
# gradients. Needs a GPU (BACKEND=reference runs the same flow on the CPU,
# with no comparison); Python 3 with NumPy.
#
#   test/Integration/run-autodiff.sh GNN_OPT GNN_RUN DATASETS [GRAPH...]
#
# EXAMPLES (default: all eight) picks examples by name, e.g. "gat gatv2";
# GNN_RUN_FLAGS adds gnn-run flags to every run (e.g. "--split=32
# --max-chunks=4" to force the heavy-row split).
# Ends with "N passed, N failed".
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
gnn_opt="$1"; gnn_run="$2"; datasets="$3"
shift 3
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
  graphs=(cora pubmed musae-github qm9 "powerlaw:nodes=169343,edges=2332486,seed=1")
fi
read -r -a examples <<< "${EXAMPLES:-gcn gcn3 sage_mean sage_max gin gat gatv2 transformer agnn}"
work=$(mktemp -d)
for e in "${examples[@]}"; do
  sed -e 's/\(%[a-z_0-9]*: tensor<[^>]*>\)\([,)]\)/\1 {gnn.differentiable}\2/g' \
    "$root/examples/$e.mlir" | "$gnn_opt" --gnn-autodiff -o "$work/$e.mlir" || exit 1
done
pass=0
fail=0
printf '%-40s %-18s %10s %12s  %s\n' graph function "gnnc ms" "worst/tol" result
for g in "${graphs[@]}"; do
  spec="$g"
  [[ "$g" == *:* ]] || spec="$datasets/$g"
  for e in "${examples[@]}"; do
    d="$work/run"; rm -rf "$d"; mkdir -p "$d/bwd-inputs"
    # The forward, whose results and residuals feed the backward.
    for fn in "${e}_fwd" "${e}_bwd"; do
      extra=(--output-dir="$d/fwd")
      [ "$fn" = "${e}_bwd" ] && extra=(--inputs="$d/bwd-inputs")
      out=$("$gnn_run" "$work/$e.mlir" --function="$fn" --graph="$spec" \
            --backend="${BACKEND:-cuda}" --reps=5 --warmup=2 "${extra[@]}" \
            ${GNN_RUN_FLAGS:-} 2>&1)
      rc=$?
      ms=$(printf '%s\n' "$out" | sed -n 's/.*"median_ms": \([0-9.e+-]*\).*/\1/p' | head -1)
      ratio=$(printf '%s\n' "$out" | sed -n 's/.*"worst_ratio_to_tolerance": \([0-9.e+-]*\).*/\1/p' | head -1)
      if [ $rc -eq 0 ] && { [ "${BACKEND:-cuda}" = reference ] || printf '%s' "$out" | grep -q '"match": true'; }; then
        pass=$((pass + 1)); result=PASS
      else
        fail=$((fail + 1)); result=FAIL
        printf '%s\n' "$out" | grep -E "error" | head -3 >&2
      fi
      printf '%-40s %-18s %10s %12s  %s\n' "${g:0:40}" "$fn" "${ms:--}" "${ratio:--}" "$result"
      if [ "$fn" = "${e}_fwd" ]; then
        # Backward inputs: the graph is argument 0, then the residuals (the
        # forward's results after @f's own), then a seeded gradient per result.
        python3 - "$work/$e.mlir" "$e" "$d/fwd" "$d/bwd-inputs" <<'PY' || exit 1
import re, sys, glob, numpy as np
src, name, fwd, out = sys.argv[1:5]
text = open(src).read()
sig = re.search(r"func\.func @" + name + r"\(.*?\)\s*->\s*(\([^{]*\)|[^{]*)\{", text, re.S).group(1)
n = len(re.findall(r"tensor<", sig))
results = sorted(glob.glob(fwd + "/result*.npy"), key=lambda p: int(re.findall(r"(\d+)\.npy$", p)[0]))
rng = np.random.default_rng(5)
k = 1
for p in results[n:]:
    np.save(f"{out}/arg{k}.npy", np.load(p).astype(np.float32)); k += 1
for p in results[:n]:
    shape = np.load(p).shape
    np.save(f"{out}/arg{k}.npy", rng.uniform(-1, 1, shape).astype(np.float32)); k += 1
PY
      fi
    done
  done
done
rm -rf "$work"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
