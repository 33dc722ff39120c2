#!/usr/bin/env bash
# Session 85, call 2 (one GPU), build s85a unless BUILD names another
# (.carry/<BUILD>/gnn-run.xz and so.xz).
#  1. Both op-level scoreboards (bench/scoreboard_both.sh): the bf16 and
#     fp32 tables on this card.
#  2. bench/gine.py, model and layer, alternating (issue 31's GINE point).
set -u
S0=$(date +%s)
LIMIT=${LIMIT:-570}
BUILD=${BUILD:-s85a}
left() { echo $(( LIMIT - ($(date +%s) - S0) )); }
mkdir -p .carry/bin .carry/py312
cp .carry/$BUILD/gnn-run.xz .carry/bin/gnn-run.xz
xz -dc .carry/$BUILD/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
A=$R/all.txt
t scoreboard
timeout 330 bash bench/scoreboard_both.sh .carry /tmp/sb
cp /tmp/sb/tables.md /tmp/sb/out.tgz "$R"/ 2>/dev/null
grep -E "^forward|^##" /tmp/sb/tables.md >> $A
t gine
for i in 1 2 3; do
  for kind in "" "--layer-only"; do
    [ $(left) -lt 40 ] && break
    echo "== gine $kind round $i" >> $A
    timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 $kind 2>&1 | tail -4 >> $A
  done
done
t done
cat $A
