#!/usr/bin/env bash
# Runs compute-sanitizer (memcheck and racecheck) over gnn-run on the kernels
# with shared memory, shuffles and in-place updates: fused attention (with its
# log-sum-exp), fused aggregation, the unfused edge softmax and the heavy-row
# split with short (512-position) and long chunks. Needs a GPU.
#
#   test/Integration/sanitize.sh GNN_RUN DATASETS [GRAPH]
#
# GRAPH (default musae-github, whose hub rows are split) is a data-set name
# under DATASETS or a generator spec. A case passes when gnn-run matches the
# reference and the tool reports 0 errors (0 hazards for racecheck). Ends
# with "N passed, N failed".
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
gnn_run="$1"
datasets="$2"
graph="${3:-musae-github}"
spec="$graph"
[[ "$graph" == *:* ]] || spec="$datasets/$graph"
cases=(
  "examples/gatv2.mlir"
  "examples/transformer.mlir"
  "examples/sage_max.mlir"
  "test/Integration/Inputs/fused_aggregation.mlir"
  "test/Integration/Inputs/attention_lse.mlir#gatv2_lse"
  "test/Integration/Inputs/attention_lse.mlir#softmax_lse"
)
pass=0
fail=0
for tool in memcheck racecheck; do
  for chunks in 8192 4; do
    for entry in "${cases[@]}"; do
      f="$root/${entry%%#*}"
      fn=()
      [[ "$entry" == *#* ]] && fn=(--function="${entry#*#}")
      out=$(compute-sanitizer --tool "$tool" --error-exitcode 9 \
              "$gnn_run" "$f" "${fn[@]}" --graph="$spec" --backend=cuda \
              --max-chunks="$chunks" --reps=1 --warmup=0 2>&1)
      rc=$?
      summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
      if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '"match": true'; then
        pass=$((pass + 1)); result=PASS
      else
        fail=$((fail + 1)); result=FAIL
        printf '%s\n' "$out" | grep -E "error|Error|Hazard|Invalid" | head -5 >&2
      fi
      printf '%-10s %-6s %-45s %-40s %s\n' "$tool" "$chunks" "$entry" "${summary:-no summary}" "$result"
    done
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
