#!/usr/bin/env bash
# Derives every example's forward and backward functions with gnn-autodiff
# (every tensor argument differentiable) and runs both with the cuda backend
# on each graph against the reference evaluator (gnn-run checks each result,
# |gnnc - ref| <= 1e-4 * (1 + |ref|)). The backward runs on seeded inputs
# standing for the residuals and output gradients. Needs a GPU.
#
#   test/Integration/run-autodiff.sh GNN_OPT GNN_RUN DATASETS [GRAPH...]
#
# Ends with "N passed, N failed".
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
gnn_opt="$1"; gnn_run="$2"; datasets="$3"
shift 3
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
  graphs=(cora pubmed musae-github qm9 "powerlaw:nodes=169343,edges=2332486,seed=1")
fi
examples=(gcn sage_mean sage_max gin gat gatv2 transformer agnn)
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
    for fn in "${e}_fwd" "${e}_bwd"; do
      out=$("$gnn_run" "$work/$e.mlir" --function="$fn" --graph="$spec" \
            --backend=cuda --reps=5 --warmup=2 2>&1)
      rc=$?
      ms=$(printf '%s\n' "$out" | sed -n 's/.*"median_ms": \([0-9.e+-]*\).*/\1/p' | head -1)
      ratio=$(printf '%s\n' "$out" | sed -n 's/.*"worst_ratio_to_tolerance": \([0-9.e+-]*\).*/\1/p' | head -1)
      if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '"match": true'; then
        pass=$((pass + 1)); result=PASS
      else
        fail=$((fail + 1)); result=FAIL
        printf '%s\n' "$out" | grep -E "error" | head -3 >&2
      fi
      printf '%-40s %-18s %10s %12s  %s\n' "${g:0:40}" "$fn" "${ms:--}" "${ratio:--}" "$result"
    done
  done
done
rm -rf "$work"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
