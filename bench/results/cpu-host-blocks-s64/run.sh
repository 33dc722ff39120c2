#!/usr/bin/env bash
# Session 64's CPU figures: gine_step.py and bench/cpu_path.py with the
# Python module of 014b1bc (OLD: at most 256 MiB of freed blocks kept, exact
# sizes) and of the change (NEW: size classes, up to the most in use at
# once), in processes of their own, the versions in turn.
#   OLD=<dir with gnnc/> NEW=<dir with gnnc/> PY=<python> bash run.sh OUTDIR
set -u
out=${1:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$out"
for round in 1 2; do
  for v in OLD NEW; do
    PYTHONPATH=${!v} "$PY" "$here/gine_step.py" gnnc 5 2>/dev/null | tr '\n' ' ' |
      sed "s/^/$v round $round: /" >> "$out/ab.txt"
    echo >> "$out/ab.txt"
  done
done
for v in OLD NEW; do
  PYTHONPATH=${!v} "$PY" "$root/bench/cpu_path.py" 2>/dev/null | sed "s/^/$v: /" >> "$out/cpu_path.txt"
done
for v in OLD NEW OLD NEW; do
  PYTHONPATH=${!v} "$PY" "$here/gine_varying.py" 2>/dev/null | sed "s/^/$v: /" >> "$out/varying.txt"
done
