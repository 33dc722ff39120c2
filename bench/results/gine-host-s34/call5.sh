#!/usr/bin/env bash
# Session 34, call 5: gnn-run --grad's check with the reference backward's
# second reading (the reference forward's own residuals where the gradients
# differ from the one on the GPU's): every example of run-examples.sh,
# forward and backward, on pubmed, qm9 and a 20K-node power-law graph, in
# parallel (timings not used); per run the exit code, the match, which
# residuals the gradients matched and the worst error over the tolerance.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t grad
E=(examples/gcn.mlir examples/gcn3.mlir examples/sage_mean.mlir examples/sage_max.mlir
   examples/gin.mlir examples/gat.mlir examples/gatv2.mlir examples/transformer.mlir
   examples/agnn.mlir test/Integration/Inputs/fused_aggregation.mlir
   "test/Integration/Inputs/attention_lse.mlir#gatv2_lse" "test/Integration/Inputs/attention_lse.mlir#softmax_lse"
   "test/Integration/Inputs/attention_odd_heads.mlir#dot_h2d3" "test/Integration/Inputs/attention_odd_heads.mlir#dot_h4d5"
   "test/Integration/Inputs/attention_dropout.mlir#gat_dropout" "test/Integration/Inputs/attention_dropout.mlir#transformer_dropout"
   .carry/peers/gnnc_ops_bf16/max.mlir .carry/peers/gnnc_ops_bf16/gatv2.mlir .carry/peers/gnnc_ops_bf16/spmm_sum.mlir)
mkdir -p $R/runs
for g in $D/pubmed $D/qm9 "powerlaw:nodes=20000,edges=200000,seed=1"; do
  for e in "${E[@]}"; do echo "$g|$e"; done
done | xargs -P 8 -I{} bash -c '
  g="${1%%|*}"; e="${1#*|}"; f="${e%%#*}"; fn=(); [[ "$e" == *#* ]] && fn=(--function="${e#*#}")
  tag=$(basename "$g" | tr ":=," "___")__$(basename "$(dirname "$f")")_$(basename "$f" .mlir)${fn:+_${e#*#}}
  timeout 300 '"$B"'/bin/gnn-run "$f" "${fn[@]}" --grad --graph="$g" --backend=cuda --reps=1 --warmup=0 > '"$R"'/runs/$tag.json 2> '"$R"'/runs/$tag.err
  echo $? > '"$R"'/runs/$tag.rc' _ {}
python3 - $R/runs > $R/summary.txt <<'PY'
import glob, json, os, sys
ok = bad = 0
for rc in sorted(glob.glob(sys.argv[1] + "/*.rc")):
    base = rc[:-3]; code = int(open(rc).read())
    try:
        c = json.load(open(base + ".json"))["cuda"]
        line = (f"{os.path.basename(base):60s} rc={code} match={c.get('match')} "
                f"bwd.reference_residuals={c['bwd'].get('reference_residuals')} "
                f"fwd.worst={c['fwd'].get('worst_ratio_to_tolerance', 0):.3g} "
                f"bwd.worst={c['bwd'].get('worst_ratio_to_tolerance', 0):.3g}")
    except Exception as e:
        line = f"{os.path.basename(base):60s} rc={code} no summary ({open(base + '.err').read().strip()[-200:]})"
    good = code == 0 and "match=True" in line
    ok += good; bad += not good
    print(("PASS " if good else "FAIL ") + line)
print(f"{ok} passed, {bad} failed")
PY
tail -1 $R/summary.txt; grep -E "FAIL|reference forward" $R/summary.txt | head -20
t end
