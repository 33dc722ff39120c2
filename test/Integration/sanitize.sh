#!/usr/bin/env bash
# Runs compute-sanitizer over gnn-run on every kernel family the code
# generator emits: dense elementwise, degree, edge maps (gather, sddmm), the
# edge softmax, aggregations (sum, mean, max, with fused edge chains), fused
# attention (with its log-sum-exp), the heavy-row split with short
# (512-position) and long chunks, and, given GNN_OPT, the row reductions of
# gnn-autodiff's backward functions. A case passes when gnn-run matches the
# reference (backward functions: see below) and the tool reports 0 errors
# (0 hazards for racecheck). Needs a GPU.
#
#   test/Integration/sanitize.sh GNN_RUN DATASETS [GRAPH] [GNN_OPT]
#
# GRAPH (default musae-github, whose hub rows are split) is a data-set name
# under DATASETS or a generator spec. TOOLS (default "memcheck racecheck
# initcheck synccheck") and CHUNKS (default "8192 4") select the runs, CASES
# (an extended regular expression, default all) the cases. Ends with "N
# passed, N failed".
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
gnn_run="$1"
datasets="$2"
graph="${3:-musae-github}"
gnn_opt="${4:-}"
spec="$graph"
[[ "$graph" == *:* ]] || spec="$datasets/$graph"
cases=()
for e in gcn sage_mean sage_max gin gat gatv2 transformer agnn; do
  cases+=("examples/$e.mlir")
done
cases+=(
  "test/Integration/Inputs/fused_aggregation.mlir"
  "test/Integration/Inputs/attention_lse.mlir#gatv2_lse"
  "test/Integration/Inputs/attention_lse.mlir#softmax_lse"
)
work=$(mktemp -d)
if [ -n "$gnn_opt" ]; then
  for e in gcn gat gatv2 transformer sage_max; do
    sed -e 's/\(%[a-z_0-9]*: tensor<[^>]*>\)\([,)]\)/\1 {gnn.differentiable}\2/g' \
      "$root/examples/$e.mlir" | "$gnn_opt" --gnn-autodiff -o "$work/${e}_ad.mlir" || exit 1
    cases+=("$work/${e}_ad.mlir#${e}_bwd")
  done
  # The max forward that keeps its winner codes (a second result).
  cases+=("$work/sage_max_ad.mlir#sage_max_fwd")
fi
pass=0
fail=0
for tool in ${TOOLS:-memcheck racecheck initcheck synccheck}; do
  for chunks in ${CHUNKS:-8192 4}; do
    for entry in "${cases[@]}"; do
      [[ "$entry" =~ ${CASES:-.} ]] || continue
      f="${entry%%#*}"
      [[ "$f" == /* ]] || f="$root/$f"
      fn=()
      [[ "$entry" == *#* ]] && fn=(--function="${entry#*#}")
      # A backward function here gets seeded residuals that no forward
      # produced (a log-sum-exp unrelated to the scores), so its values are
      # not comparable in fp32; its numbers are checked by run-autodiff.sh,
      # which feeds it the forward's residuals. Here only the tool's verdict
      # counts for it.
      check=()
      [[ "$entry" == *_bwd ]] && check=(--no-check)
      out=$(compute-sanitizer --tool "$tool" --error-exitcode 9 \
              "$gnn_run" "$f" "${fn[@]}" --graph="$spec" --backend=cuda \
              --max-chunks="$chunks" --reps=1 --warmup=0 "${check[@]}" 2>&1)
      rc=$?
      summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
      if [ $rc -eq 0 ] && { [ ${#check[@]} -gt 0 ] ||
                            printf '%s' "$out" | grep -q '"match": true'; }; then
        pass=$((pass + 1)); result=PASS
      else
        fail=$((fail + 1)); result=FAIL
        printf '%s\n' "$out" | grep -E "error|Error|Hazard|Invalid" | head -5 >&2
      fi
      printf '%-10s %-6s %-45s %-40s %s\n' "$tool" "$chunks" "$entry" "${summary:-no summary}" "$result"
    done
  done
done
rm -rf "$work"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
