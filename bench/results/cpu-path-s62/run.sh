#!/usr/bin/env bash
# Session 62's CPU-path figures: bench/cpu_path.py and session 61's epoch.py
# (Cora, 2-layer GCN and GAT training steps) with the Python module of the
# session's start (OLD) and of its end (NEW), each figure a process of its
# own, the versions in turn.
#   OLD=<dir with gnnc/> NEW=<dir with gnnc/> PY=<python> bash run.sh OUTDIR
set -u
out=${1:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$out"
for round in 1 2; do
  for v in OLD NEW; do
    PYTHONPATH=${!v} "$PY" "$root/bench/cpu_path.py" 2>/dev/null |
      sed "s/^/$v round $round: /" >> "$out/cpu_path.txt"
  done
done
for model in gcn gat; do
  for round in 1 2 3; do
    for v in OLD NEW PYG; do
      lib=gnnc; mod=${!v:-}
      [ "$v" = PYG ] && lib=pyg && mod=$NEW
      PYTHONPATH=$mod "$PY" "$root/bench/results/cpu-path-s61/epoch.py" "$lib" "$model" 2>/dev/null |
        sed "s/^/$v round $round: /" >> "$out/epoch.txt"
    done
  done
done
