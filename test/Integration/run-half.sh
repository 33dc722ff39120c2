#!/usr/bin/env bash
# Runs the CUDA kernels of bf16 and f16 functions on the GPU against the
# reference evaluator (docs/Semantics.md, "Storage and arithmetic types"):
#  - every gnn op (Inputs/half_ops.mlir: spmm sum/mean/max/weighted, reduce,
#    edge softmax, sddmm dot) and the fused GT and GATv2 attentions in bf16
#    and f16, forward with --backend=cuda and forward+backward with --grad
#    (the winner codes f32), where gnn-run
#    compares each result elementwise with the per-op tolerance |gnnc - ref|
#    <= tol * (1 + |ref|), tol = 1e-2 for bf16 and 2e-3 for f16 (exit 2
#    otherwise); on power-law graphs also with long heavy-row chunks
#    (--max-chunks=4);
#  - every example layer (and the fused-aggregation input) in bf16 and f16,
#    forward: the GPU's results against the reference's on the same inputs
#    (--dump-inputs), normwise with the layer tolerance max |gnnc - ref| <=
#    4 tol (1 + max |ref|) (several stored half-precision intermediates).
# gnn-run makes the inputs of their type (seeded float32 values rounded to
# it). Needs a GPU.
#
#   test/Integration/run-half.sh GNN_RUN DATASETS [GRAPH...]
#
# GRAPH is a data-set name under DATASETS or a generator spec (default: cora
# and a 5,000-node power-law graph whose hub rows are split). Ends with
# "N passed, N failed"; each line shows the worst error as a multiple of the
# tolerance.
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
gnn_run="$1"
datasets="$2"
shift 2
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
  graphs=(cora "powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ops=(spmm_sum spmm_mean spmm_max spmm_weighted reduce_sum edge_softmax sddmm_dot attention_dot attention_leaky)
layers=(gcn sage_mean sage_max gin gat gatv2 transformer agnn fused_aggregation)
for t in bf16 f16; do
  sed -e "s/f32/$t/g" "$root/test/Integration/Inputs/half_ops.mlir" > "$work/ops-$t.mlir"
  for e in "${layers[@]}"; do
    src="$root/examples/$e.mlir"
    [ "$e" = fused_aggregation ] && src="$root/test/Integration/Inputs/fused_aggregation.mlir"
    sed -e "s/f32/$t/g" "$src" > "$work/$e-$t.mlir"
  done
done

pass=0
fail=0
# check NAME GRAPH OUTPUT RC: a run passes when gnn-run exits 0 and reports a
# match (for --grad: forward and backward both).
check() {
  local name="$1" graph="$2" out="$3" rc="$4" result ratio
  ratio=$(printf '%s\n' "$out" | sed -n 's/.*"worst_ratio_to_tolerance": \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
  if [ "$rc" -eq 0 ] && printf '%s' "$out" | grep -q '"match": true' &&
     ! printf '%s' "$out" | grep -q '"match": false'; then
    pass=$((pass + 1)); result=PASS
  else
    fail=$((fail + 1)); result=FAIL
    printf '%s\n' "$out" | grep -E "error" | head -5 >&2
  fi
  printf '%-40s %-30s %12s  %s\n' "${graph:0:40}" "$name" "${ratio:--}" "$result"
}

printf '%-40s %-30s %12s  %s\n' graph case "worst/tol" result
for g in "${graphs[@]}"; do
  spec="$g"
  [[ "$g" == *:* ]] || spec="$datasets/$g"
  for t in bf16 f16; do
    tol=2e-3; [ "$t" = bf16 ] && tol=1e-2
    for op in "${ops[@]}"; do
      out=$("$gnn_run" "$work/ops-$t.mlir" --function="$op" --graph="$spec" --backend=cuda --reps=3 --warmup=1 2>&1)
      check "$op $t" "$g" "$out" $?
      out=$("$gnn_run" "$work/ops-$t.mlir" --function="$op" --graph="$spec" --backend=cuda --grad --reps=3 --warmup=1 2>&1)
      check "$op $t --grad" "$g" "$out" $?
    done
    if [[ "$g" == powerlaw:* ]]; then
      for op in spmm_sum spmm_max; do
        out=$("$gnn_run" "$work/ops-$t.mlir" --function="$op" --graph="$spec" --backend=cuda --grad --max-chunks=4 --reps=3 --warmup=1 2>&1)
        check "$op $t --grad chunks=4" "$g" "$out" $?
      done
    fi
    for e in "${layers[@]}"; do
      d="$work/run-$e-$t"; rm -rf "$d"
      out=$("$gnn_run" "$work/$e-$t.mlir" --graph="$spec" --dump-inputs="$d/in" \
            --output-dir="$d/ref" 2>&1) &&
      out=$("$gnn_run" "$work/$e-$t.mlir" --graph="$spec" --backend=cuda \
            --inputs="$d/in" --output-dir="$d/gpu" --no-check --reps=3 --warmup=1 2>&1) &&
      out="$out"$'\n'$(python3 - "$d/ref" "$d/gpu" "$tol" <<'PY' 2>&1
import glob, os, sys, numpy as np
ref, gpu, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
worst = 0.0
for p in sorted(glob.glob(ref + "/result*.npy")):
    r = np.load(p); g = np.load(os.path.join(gpu, os.path.basename(p)))
    assert r.shape == g.shape, (r.shape, g.shape)
    if r.size:
        worst = max(worst, float(np.max(np.abs(g - r)) / (4 * tol * (1 + np.max(np.abs(r))))))
print('"worst_ratio_to_tolerance": %g' % worst)
print('"match": %s' % ("true" if worst <= 1 else "false"))
PY
)
      check "$e $t (layer)" "$g" "$out" $?
    done
  done
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
