#!/usr/bin/env bash
# Every example's forward and backward (gnn-autodiff) on the GPU against the
# reference evaluator, on every data set of a datasets folder: one
# test/Integration/run-autodiff.sh job per (graph, example), JOBS at a time
# (the reference evaluator's backward, on the CPU, is the slow part: all 11
# data sets of ../shared/datasets take about 7 minutes on the H100 machine's
# 16 cores; qm9's jobs may each hold up to ~25 GB of host memory, so run it with
# 4 jobs). Prints every job's lines and a total "N passed, N failed". Needs a
# GPU.
#
#   bench/autodiff_all.sh GNN_OPT GNN_RUN DATASETS [JOBS (default: nproc)]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
opt=$(realpath "$1"); run=$(realpath "$2"); datasets=$(realpath "$3")
jobs=${4:-$(nproc)}
out=$(mktemp -d)
for d in "$datasets"/*/; do
  [ -f "$d/meta.txt" ] || continue
  for e in gcn sage_mean sage_max gin gat gatv2 transformer agnn; do
    echo "$(basename "$d") $e"
  done
done | xargs -P "$jobs" -L 1 bash -c \
  'EXAMPLES="$1" bash "'"$here"'/test/Integration/run-autodiff.sh" "'"$opt"'" "'"$run"'" "'"$datasets"'" "$0" > "'"$out"'/$0.$1.txt" 2>&1; grep -v -e " passed, " -e "^graph " "'"$out"'/$0.$1.txt"'
# (Each job's lines are printed as it ends, so a run cut short keeps them.)
cat "$out"/*.txt | awk '/ passed, .* failed/ {p += $1; f += $3} END {print p " passed, " f " failed"}'
rm -rf "$out"
