#!/usr/bin/env bash
# The generated CUDA C++ and Program of every example (and of the
# scoreboard's ops, when ../shared/bench/peers/gnnc_ops is beside the
# repository), forward and after --gnn-autodiff, for several graph
# statistics: one file per (input, statistics, kind) under OUT. Two
# snapshots (before and after a refactoring) compare with `diff -r`.
#
#   scripts/cuda-snapshot.sh BIN_DIR OUT_DIR
set -euo pipefail
bin=${1:?usage: cuda-snapshot.sh BIN_DIR OUT_DIR}; out=${2:?usage: cuda-snapshot.sh BIN_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
inputs=("$root"/examples/*.mlir)
if [ -d "$root/../shared/bench/peers/gnnc_ops" ]; then
  inputs+=("$root"/../shared/bench/peers/gnnc_ops/*.mlir)
fi
stats=(
  ""
  "mean-degree:2.0"
  "mean-degree:40.0,max-in:5000"
  "nodes:19717,edges:88648,max-in:171,max-out:171,p50:2,p90:12,p99:35,p999:72,rows-by-degree:9094/3357/2498/1872/1711/935/223/23/4,edges-by-degree:9094/6714/8408/11645/20482/20583/9353/1783/586"
  "nodes:37700,edges:578006,max-in:9458,max-out:9458,p50:6,p90:30,p99:138,p999:665,csr-order:1,rows-by-degree:5045/4620/6507/7552/6454/4179/2043/868/272/102/38/14/4/1/1,edges-by-degree:5045/9240/22358/47297/76314/95442/91213/76024/46462/34595/26267/20113/11093/7085/9458"
  # 4,096 QM9 molecules: graph blocks where a function takes them.
  "nodes:35970,edges:76008,max-in:4,max-out:4,graphs:4096,smallest-graph:1,largest-graph:9"
)
n=0
for f in "${inputs[@]}"; do
  name=$(basename "$(dirname "$f")")-$(basename "$f" .mlir)
  for k in "${!stats[@]}"; do
    s=${stats[$k]}
    opt=(); [ -n "$s" ] && opt=(--gnn-stats="$s")
    for mode in fwd grad; do
      src=$f
      if [ $mode = grad ]; then
        # Every tensor argument differentiable (as test/Integration/run-autodiff.sh).
        src=$(mktemp)
        sed -e 's/\(%[a-z_0-9]*: tensor<[^>]*>\)\([,)]\)/\1 {gnn.differentiable}\2/g' "$f" |
          "$bin/gnn-opt" --gnn-autodiff > "$src" 2>/dev/null || { rm -f "$src"; continue; }
      fi
      for kind in cuda program; do
        "$bin/gnn-translate" "$src" --gnn-to-$kind "${opt[@]}" > "$out/$name.s$k.$mode.$kind" 2>&1 || true
        n=$((n + 1))
      done
      [ $mode = grad ] && rm -f "$src"
    done
  done
done
echo "$n outputs in $out"
