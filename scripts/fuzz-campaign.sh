#!/usr/bin/env bash
# A fuzzing campaign: runs every libFuzzer target of the sanitizer build
# (scripts/test-sanitizers.sh) in several processes at once, for a fixed time,
# and sums what they did. scripts/fuzz.sh is the short, one-process-per-target
# check CI runs; this is the long run on a machine with many cores.
#
#   scripts/fuzz-campaign.sh SECONDS [TARGET[:PROCS]...]
#
# Without targets: every target, with nproc/8 processes each (at least 1).
# PROCS processes of one target share its corpus folder (each starts from the
# seeds and the corpus, with its own random seed). Binaries come from
# ${GNNC_FUZZ_BIN:-build-asan/bin/fuzz}; corpus, crash reproducers and logs go
# under ${GNNC_FUZZ_WORK:-build-asan/fuzz}. Prints one line per target
# (processes, executions, executions per second, outcome), the total, and ends
# with `N passed, N failed`; exits non-zero when any process crashes, hangs
# (10 s per input), uses more than 4 GiB, leaks or trips a sanitizer.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bindir="${GNNC_FUZZ_BIN:-$root/build-asan/bin/fuzz}"
work="${GNNC_FUZZ_WORK:-$root/build-asan/fuzz}"
all=(ir graph-text graph-gzip graph-folder graph-npy tensor-npy program-json
     cache-entry)

if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [TARGET[:PROCS]...]" >&2
  exit 2
fi
seconds="$1"; shift
specs=("$@")
if ((${#specs[@]} == 0)); then
  per=$(( $(nproc) / 8 )); ((per < 1)) && per=1
  for t in "${all[@]}"; do specs+=("$t:$per"); done
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

declare -A procs
order=() pids=()
for s in "${specs[@]}"; do
  t="${s%%:*}" n=1
  [[ "$s" == *:* ]] && n="${s##*:}"
  if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
    echo "$0: '$s': expected TARGET or TARGET:PROCS with PROCS >= 1" >&2
    exit 2
  fi
  bin="$bindir/$t"
  if [ ! -x "$bin" ]; then
    echo "$0: no fuzz target '$t' at $bin (run scripts/test-sanitizers.sh)" >&2
    exit 2
  fi
  procs[$t]=$n order+=("$t")
  corpus="$work/corpus/$t" crashes="$work/crashes/$t" logs="$work/logs/$t"
  mkdir -p "$corpus" "$crashes" "$logs"
  rm -f "$logs"/*.log
  seeds=("$root/fuzz/seeds/$t")
  [ "$t" = ir ] && seeds+=("$root/examples" "$root/test")
  for ((i = 0; i < n; i++)); do
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      -seed=$((1000 * i + 17)) -print_final_stats=1 \
      -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}" \
      > "$logs/$i.log" 2>&1 &
    pids+=("$!:$t:$i")
  done
done

declare -A failed_procs
for p in "${pids[@]}"; do
  IFS=: read -r pid t i <<< "$p"
  if ! wait "$pid"; then
    failed_procs[$t]="${failed_procs[$t]:-} $i"
  fi
done

ok=0 bad=0 total=0 lines=()
for t in "${order[@]}"; do
  runs=0
  for f in "$work/logs/$t"/*.log; do
    r=$(grep -aEo 'stat::number_of_executed_units: *[0-9]+' "$f" |
        grep -Eo '[0-9]+$' | tail -1)
    runs=$((runs + ${r:-0}))
  done
  total=$((total + runs))
  rate=$((runs / (seconds > 0 ? seconds : 1)))
  if [ -z "${failed_procs[$t]:-}" ]; then
    lines+=("fuzz $t: ok, ${procs[$t]} processes, $runs executions in $seconds s ($rate/s)")
    ok=$((ok + 1))
  else
    line="fuzz $t: FAILED in processes${failed_procs[$t]} after $runs executions; logs $work/logs/$t"
    for i in ${failed_procs[$t]}; do
      line+=$'\n'"$(grep -aE '^==[0-9]+==ERROR|runtime error|^SUMMARY|Test unit written' \
        "$work/logs/$t/$i.log" | head -5 | sed 's/^/  /')"
    done
    lines+=("$line")
    bad=$((bad + 1))
  fi
done
printf '%s\n' "${lines[@]}"
echo "total: $total executions in $seconds s"
echo "$ok passed, $bad failed"
((bad == 0))
