#!/usr/bin/env bash
# Runs every kernel family in f64 on the GPU against the reference evaluator:
# each example layer (and the fused-aggregation and attention-with-lse
# inputs) with every f32 turned into f64, forward with --backend=cuda and
# forward+backward with --grad --backend=cuda (gnn-autodiff's @f_fwd/@f_bwd);
# attention unfused (fuse=none, through gnn-opt); on power-law graphs also
# the heavy-row split with long chunks (--max-chunks=4). gnn-run compares
# f64 results with |gnnc - ref| <= 1e-9 * (1 + |ref|) elementwise (exit 2
# otherwise). Last, a graph too large for the device is refused with exit
# code 1 and a message naming nodes, edges and bytes. Needs a GPU.
#
#   test/Integration/run-f64.sh GNN_RUN DATASETS [GRAPH...]
#
# GRAPH is a data-set name under DATASETS or a generator spec (default: cora
# and a 5,000-node power-law graph whose hub rows, up to 21,226 edges, are
# split; the reference's backward takes minutes on larger graphs such as
# musae-github). gnn-opt is taken from beside GNN_RUN unless GNN_OPT says
# otherwise. Ends with "N passed, N failed".
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
gnn_run="$1"
datasets="$2"
shift 2
gnn_opt="${GNN_OPT:-$(dirname "$gnn_run")/gnn-opt}"
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
  graphs=(cora "powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

examples=(gcn sage_mean sage_max gin gat gatv2 transformer agnn)
to_f64() { sed -e 's/f32/f64/g' "$1" > "$2"; }
files=()
for e in "${examples[@]}"; do
  to_f64 "$root/examples/$e.mlir" "$work/$e.mlir"
  files+=("$work/$e.mlir")
done
to_f64 "$root/test/Integration/Inputs/fused_aggregation.mlir" "$work/fused_aggregation.mlir"
to_f64 "$root/test/Integration/Inputs/attention_lse.mlir" "$work/attention_lse.mlir"
files+=("$work/fused_aggregation.mlir" "$work/attention_lse.mlir#gatv2_lse"
        "$work/attention_lse.mlir#softmax_lse")
# Attention unfused: sddmm, score, edge softmax and spmm as four kernels
# (lowered here, for a graph with rows above the split; the reference runs on
# the unlowered function and the results are compared with NumPy).
"$gnn_opt" "$work/gatv2.mlir" --gnn-cuda-pipeline='fuse=none stats=mean-degree:20,max-in:2000' \
  -o "$work/gatv2_unfused.mlir" || exit 1

pass=0
fail=0
# check NAME GRAPH OUTPUT RC: a run passes when gnn-run exits 0 and reports a
# match (for --grad: forward and backward both).
check() {
  local name="$1" graph="$2" out="$3" rc="$4" result ms ratio
  ms=$(printf '%s\n' "$out" | sed -n 's/.*"\(fwdbwd_\)\{0,1\}median_ms": \([0-9.e+-]*\).*/\2/p' | tail -1)
  ratio=$(printf '%s\n' "$out" | sed -n 's/.*"worst_ratio_to_tolerance": \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
  if [ "$rc" -eq 0 ] && printf '%s' "$out" | grep -q '"match": true' &&
     ! printf '%s' "$out" | grep -q '"match": false'; then
    pass=$((pass + 1)); result=PASS
  else
    fail=$((fail + 1)); result=FAIL
    printf '%s\n' "$out" | grep -E "error" | head -5 >&2
  fi
  printf '%-40s %-22s %10s %12s  %s\n' "${graph:0:40}" "$name" "${ms:--}" "${ratio:--}" "$result"
}

printf '%-40s %-22s %10s %12s  %s\n' graph case "gnnc ms" "worst/tol" result
for g in "${graphs[@]}"; do
  spec="$g"
  [[ "$g" == *:* ]] || spec="$datasets/$g"
  for entry in "${files[@]}"; do
    f="${entry%%#*}"
    fn=()
    name=$(basename "$f" .mlir)
    if [[ "$entry" == *#* ]]; then
      fn=(--function="${entry#*#}")
      name="${entry#*#}"
    fi
    out=$("$gnn_run" "$f" "${fn[@]}" --graph="$spec" --backend=cuda --reps=3 --warmup=1 2>&1)
    check "$name" "$g" "$out" $?
  done
  d="$work/unfused"; rm -rf "$d"
  out=$("$gnn_run" "$work/gatv2.mlir" --graph="$spec" --dump-inputs="$d/in" \
        --output-dir="$d/ref" 2>&1) &&
  out=$("$gnn_run" "$work/gatv2_unfused.mlir" --graph="$spec" --backend=cuda \
        --inputs="$d/in" --output-dir="$d/gpu" --no-check --reps=3 --warmup=1 2>&1) &&
  out="$out"$'\n'$(python3 - "$d/ref" "$d/gpu" <<'PY' 2>&1
import glob, os, sys, numpy as np
ref, gpu = sys.argv[1:3]
worst = 0.0
for p in sorted(glob.glob(ref + "/result*.npy")):
    r = np.load(p); g = np.load(os.path.join(gpu, os.path.basename(p)))
    assert g.dtype == np.float64 and r.shape == g.shape, (g.dtype, r.shape, g.shape)
    worst = max(worst, float(np.max(np.abs(g - r) / (1e-9 * (1 + np.abs(r))), initial=0)))
print('"worst_ratio_to_tolerance": %g' % worst)
print('"match": %s' % ("true" if worst <= 1 else "false"))
PY
)
  check "gatv2 fuse=none" "$g" "$out" $?

  # Forward and backward: gnn-run --grad differentiates every float argument.
  for e in "${examples[@]}"; do
    out=$("$gnn_run" "$work/$e.mlir" --graph="$spec" --backend=cuda --grad --reps=3 --warmup=1 2>&1)
    check "$e --grad" "$g" "$out" $?
  done
  # Heavy rows wholly inside long chunks (the final kernel's block walk).
  if [[ "$g" == powerlaw:* || "$g" == musae-github ]]; then
    for e in gcn sage_max gatv2; do
      out=$("$gnn_run" "$work/$e.mlir" --graph="$spec" --backend=cuda --max-chunks=4 --reps=3 --warmup=1 2>&1)
      check "$e chunks=4" "$g" "$out" $?
      out=$("$gnn_run" "$work/$e.mlir" --graph="$spec" --backend=cuda --grad --max-chunks=4 --reps=3 --warmup=1 2>&1)
      check "$e --grad chunks=4" "$g" "$out" $?
    done
  fi
done

# Device memory: refused before anything is allocated, exit code 1.
huge="powerlaw:nodes=2000000,edges=4000000,seed=1"
out=$("$gnn_run" "$root/test/Integration/Inputs/huge_temp.mlir" --graph="$huge" \
      --backend=cuda --no-check 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "a graph of 2000000 nodes and 4000000 edges needs [0-9]* bytes of device memory"; then
  pass=$((pass + 1)); result=PASS
else
  fail=$((fail + 1)); result=FAIL
  printf 'exit code %s\n%s\n' "$rc" "$out" | head -5 >&2
fi
printf '%-40s %-22s %10s %12s  %s\n' "${huge:0:40}" "huge_temp refused" - - "$result"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
