#!/usr/bin/env bash
# NaN and inf on the GPU against the reference (docs/Reliability.md, "NaN and
# inf"): every example's inputs as gnn-run generates them, then poisoned by
# poison-inputs.py (NaN, +inf and -inf in single entries, whole rows of NaN
# and of -inf), run with the cuda backend, without and with the heavy-row
# split (--split=32); gnn-run checks every output against the reference, NaN
# where and only where the reference has NaN, equal infinities. Needs a GPU
# (BACKEND=reference runs the same flow on the CPU, with no comparison);
# Python 3 with NumPy.
#
#   test/Integration/run-nan.sh GNN_RUN [GRAPH...]
#
# Ends with "N passed, N failed".
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
gnn_run="$1"
shift
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
  graphs=("powerlaw:nodes=3000,edges=60000,seed=1" "batch:graphs=40,min=5,max=30,seed=2")
fi
backend="${BACKEND:-cuda}"
work=$(mktemp -d)
pass=0
fail=0
for g in "${graphs[@]}"; do
  for e in gcn sage_mean sage_max gin gat gatv2 transformer agnn; do
    f="$root/examples/$e.mlir"
    in="$work/$e"; rm -rf "$in"
    "$gnn_run" "$f" --graph="$g" --backend=reference --dump-inputs="$in" >/dev/null 2>&1 || {
      echo "$e: cannot write its inputs" >&2; fail=$((fail + 1)); continue; }
    python3 "$here/poison-inputs.py" "$in" || { fail=$((fail + 1)); continue; }
    for split in "" "--split=32"; do
      # shellcheck disable=SC2086
      out=$("$gnn_run" "$f" --graph="$g" --backend="$backend" --inputs="$in" $split 2>&1)
      rc=$?
      if [ $rc -eq 0 ] && { [ "$backend" != cuda ] || printf '%s' "$out" | grep -q '"match": true'; }; then
        pass=$((pass + 1)); result=PASS
      else
        fail=$((fail + 1)); result=FAIL
        printf '%s\n' "$out" | grep -E "error|NaN" | head -5 >&2
      fi
      printf '%-40s %-12s %-12s %s\n' "${g:0:40}" "$e" "${split:-nosplit}" "$result"
    done
  done
done
rm -rf "$work"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
