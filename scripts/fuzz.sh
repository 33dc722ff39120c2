#!/usr/bin/env bash
# Runs libFuzzer targets of the sanitizer build (scripts/test-sanitizers.sh
# builds them into ${GNNC_ASAN_BUILD_DIR:-build-asan}/bin/fuzz).
#
#   scripts/fuzz.sh [TARGET...|all] [SECONDS]     (default: all, 60 s each)
#
# Targets: ir graph-text graph-gzip graph-folder graph-npy tensor-npy
# program-json cache-entry. Seeds come from fuzz/seeds/TARGET (and, for ir,
# examples/ and test/); new inputs go to build-asan/fuzz/corpus/TARGET, crash
# reproducers to build-asan/fuzz/crashes/TARGET. Prints a line per target
# (executions, outcome) and ends with `N passed, N failed`; exits non-zero
# when a target crashes, hangs (10 s per input), uses more than 4 GiB, leaks,
# or trips a sanitizer.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_ASAN_BUILD_DIR:-$root/build-asan}"
all=(ir graph-text graph-gzip graph-folder graph-npy tensor-npy program-json
     cache-entry)

targets=()
seconds=60
for a in "$@"; do
  if [[ "$a" =~ ^[0-9]+$ ]]; then seconds="$a"
  elif [ "$a" = all ]; then targets+=("${all[@]}")
  else targets+=("$a"); fi
done
((${#targets[@]})) || targets=("${all[@]}")

# The same options as the sanitizer tests (docs/Reliability.md).
export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

passed=0 failed=0
for t in "${targets[@]}"; do
  bin="$build/bin/fuzz/$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz $t: FAILED (no $bin; run scripts/test-sanitizers.sh)"
    failed=$((failed + 1))
    continue
  fi
  corpus="$build/fuzz/corpus/$t" crashes="$build/fuzz/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  seeds=("$root/fuzz/seeds/$t")
  [ "$t" = ir ] && seeds+=("$root/examples" "$root/test")
  log="$build/fuzz/$t.log"
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$crashes/" \
    "$corpus" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  runs=$(grep -aEo 'stat::number_of_executed_units: *[0-9]+' "$log" |
         grep -Eo '[0-9]+$' | tail -1)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz $t: ok, ${runs:-0} executions in ${seconds} s"
    passed=$((passed + 1))
  else
    echo "fuzz $t: FAILED (exit $rc) after ${runs:-?} executions; log $log"
    grep -aE '^==[0-9]+==ERROR|runtime error|^SUMMARY|Test unit written' "$log" |
      head -5 | sed 's/^/  /'
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
