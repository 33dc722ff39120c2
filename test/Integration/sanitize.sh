#!/usr/bin/env bash
# Runs compute-sanitizer over gnn-run on every kernel family the code
# generator emits: dense elementwise, degree, edge maps (gather, sddmm), the
# edge softmax, aggregations (sum, mean, max, with fused edge chains), fused
# attention (with its log-sum-exp), the heavy-row split with short
# (512-position) and long chunks, the weight gradients' row split with the
# bias gradients as its row sums (Inputs/linear_bias.mlir's training step,
# checked against the reference), and, given GNN_OPT, the row reductions of
# gnn-autodiff's backward functions. A case passes when gnn-run matches the
# reference (backward functions: see below) and the tool reports 0 errors
# (0 hazards for racecheck, or hazards only inside cuBLAS's nvjet GEMM
# kernels, reported as "PASS (cuBLAS hazards)"). Needs a GPU.
#
#   test/Integration/sanitize.sh GNN_RUN DATASETS [GRAPH] [GNN_OPT]
#
# GRAPH (default musae-github, whose hub rows are split) is a data-set name
# under DATASETS or a generator spec. TOOLS (default "memcheck racecheck
# initcheck synccheck") and CHUNKS (default "8192 4") select the runs, CASES
# (an extended regular expression, default all) the cases. TYPES (default
# "f32") adds, for bf16 and f16, the example layers and the fused
# aggregation in that type and each op of Inputs/half_ops.mlir forward and
# backward (--grad): the half kernel families (their values are checked by
# run-half.sh; here the tool's verdict counts); without f32 in TYPES only
# those. Each type also runs, forward and training step (--grad), the
# relational layer on a typed graph (the relation gather, the backward's
# atomic relation reduce), also bipartite, and the bipartite layers on a graph of two node
# sets with hub destinations (split rows), on graphs of their own kinds
# (TYPED_GRAPH, BIPARTITE_GRAPH). An f32 case passes when it matches the
# reference (forward and gradients); a case run with --no-check (half
# types, seeded backward functions) on the tool's verdict alone. Ends with
# "N passed, N failed".
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
gnn_run="$1"
datasets="$2"
graph="${3:-musae-github}"
gnn_opt="${4:-}"
spec="$graph"
[[ "$graph" == *:* ]] || spec="$datasets/$graph"
layers=()
for e in gcn sage_mean sage_max gin gat gatv2 transformer agnn; do
  layers+=("examples/$e.mlir")
done
layers+=("test/Integration/Inputs/fused_aggregation.mlir")
cases=()
# Extra gnn-run flags of a case (a half-precision copy, a backward function).
declare -A flags
work=$(mktemp -d)
types=" ${TYPES:-f32} "
if [[ "$types" == *" f32 "* ]]; then
  cases+=("${layers[@]}"
          "test/Integration/Inputs/attention_lse.mlir#gatv2_lse"
          "test/Integration/Inputs/attention_lse.mlir#softmax_lse"
          "test/Integration/Inputs/linear_bias.mlir")
  flags["test/Integration/Inputs/linear_bias.mlir"]="--grad"
fi
for t in bf16 f16; do
  [[ "$types" == *" $t "* ]] || continue
  for f in "${layers[@]}"; do
    h="$work/$(basename "${f%.mlir}")-$t.mlir"
    sed -e "s/f32/$t/g" "$root/$f" > "$h"
    cases+=("$h")
    flags["$h"]="--no-check"
  done
  sed -e "s/f32/$t/g" "$root/test/Integration/Inputs/half_ops.mlir" > "$work/half_ops-$t.mlir"
  for op in spmm_sum spmm_mean spmm_max spmm_weighted reduce_sum edge_softmax sddmm_dot attention_dot attention_leaky; do
    cases+=("$work/half_ops-$t.mlir#$op")
    flags["$work/half_ops-$t.mlir#$op"]="--grad --no-check"
  done
done
# Typed and bipartite graphs: their own graphs (the cases' entries in
# `graphs`), forward and --grad, in every type asked for.
declare -A graphs
typed_graph="${TYPED_GRAPH:-powerlaw:nodes=5000,edges=100000,alpha=1.2,relations=3}"
bipartite_graph="${BIPARTITE_GRAPH:-bipartite:src=3000,dst=400,edges=30000,alpha=1.3}"
for t in f32 bf16 f16; do
  [[ "$types" == *" $t "* ]] || continue
  for f in test/Tools/Inputs/rgcn-typed.mlir test/Tools/Inputs/rgcn-typed-bipartite.mlir \
           test/Integration/Inputs/bipartite/*.mlir; do
    f="$root/$f"
    case "$f" in
      */rgcn-typed.mlir) g="$typed_graph" ;;
      */rgcn-typed-bipartite.mlir) g="$bipartite_graph,relations=3" ;;
      *) g="$bipartite_graph" ;;
    esac
    for mode in fwd grad; do
      h="$work/$(basename "${f%.mlir}")-$t-$mode.mlir"
      sed -e "s/f32/$t/g" "$f" > "$h"
      cases+=("$h")
      graphs["$h"]="$g"
      flags["$h"]=""
      [ "$mode" = grad ] && flags["$h"]="--grad"
      [ "$t" = f32 ] || flags["$h"]+=" --no-check"
    done
  done
done
if [ -n "$gnn_opt" ] && [[ "$types" == *" f32 "* ]]; then
  for e in gcn gat gatv2 transformer sage_max; do
    sed -e 's/\(%[a-z_0-9]*: tensor<[^>]*>\)\([,)]\)/\1 {gnn.differentiable}\2/g' \
      "$root/examples/$e.mlir" | "$gnn_opt" --gnn-autodiff -o "$work/${e}_ad.mlir" || exit 1
    cases+=("$work/${e}_ad.mlir#${e}_bwd")
    flags["$work/${e}_ad.mlir#${e}_bwd"]="--no-check"
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
      # counts for it, as for the half-precision copies (run-half.sh checks
      # their values).
      read -r -a check <<< "${flags[$entry]:-}"
      out=$(compute-sanitizer --tool "$tool" --error-exitcode 9 \
              "$gnn_run" "$f" "${fn[@]}" --graph="${graphs[$entry]:-$spec}" \
              --backend=cuda --max-chunks="$chunks" --reps=1 --warmup=0 \
              "${check[@]}" 2>&1)
      rc=$?
      summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
      # racecheck's hazards inside cuBLAS's own GEMM kernels (nvjet_*, the
      # weight gradients of the half-precision GAT backward on an H200,
      # session 36) are not gnnc's: such a run counts as passed, marked
      # "cuBLAS hazards", when every race it reports is in an nvjet kernel
      # and the program itself succeeded. (Leaving nvjet out with
      # --kernel-name-exclude made the uninstrumented GEMMs fault under the
      # tool.)
      races=$(printf '%s\n' "$out" | grep -E "Race reported between")
      vendor=""
      if [ "$tool" = racecheck ] && [ $rc -eq 9 ] && [ -n "$races" ] &&
         ! printf '%s\n' "$races" | grep -qv "access at nvjet_" &&
         ! printf '%s' "$out" | grep -q "Target application returned an error"; then
        rc=0; vendor=" (cuBLAS hazards)"
      fi
      # Checked cases: every comparison gnn-run made (forward, gradients)
      # matched, and there was one.
      if [ $rc -eq 0 ] && { [[ " ${check[*]} " == *" --no-check "* ]] ||
                            { printf '%s' "$out" | grep -q '"match": true' &&
                              ! printf '%s' "$out" | grep -q '"match": false'; }; }; then
        pass=$((pass + 1)); result="PASS$vendor"
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
