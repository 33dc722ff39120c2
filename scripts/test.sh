#!/usr/bin/env bash
# The one test command: installs dependencies, builds, and runs every test
# (GoogleTest and lit, through ctest); the Python tests again under a second
# PyTorch (scripts/test-torch-compat.sh, GNNC_TORCH_COMPAT: its version,
# default 2.11.0, 0 skips); then, unless GNNC_TEST_SANITIZERS=0,
# the same tests under ASan + UBSan (scripts/test-sanitizers.sh, build-asan/)
# and a short run of every fuzz target (scripts/fuzz.sh, GNNC_FUZZ_SECONDS
# each, default 5). Exits non-zero on any failure; the last line is
# `N passed, N failed` over all of them (ctest's tests and fuzz targets).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_BUILD_DIR:-$root/build}"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

"$root/scripts/install-deps.sh" || exit 1

passed=0 failed=0 skipped=0 status=0
# Adds the counts of a ctest log (or a fuzz.sh log) to the totals; tests
# ctest skipped (they need a GPU) are counted apart, not as passed.
count() {
  local line p f s
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$1" | tail -1)
  if [ -n "$line" ]; then
    f=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
    s=$(grep -cE '^[[:space:]]+[0-9]+ - .*\(Skipped\)$' "$1")
    skipped=$((skipped + s))
    p=$(( $(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line") - f - s ))
  else
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
    p=${line%% passed*}
    f=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")
  fi
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-1}))
}

echo "== build and ctest ($build)"
( "$root/scripts/build.sh" && cd "$build" &&
  ctest --output-on-failure -j "${GNNC_JOBS:-$(nproc)}" ) 2>&1 | tee "$logs/ctest"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
count "$logs/ctest"

compat="${GNNC_TORCH_COMPAT:-2.11.0}"
if [ "$compat" != 0 ] && [ "${GNNC_PYTHON:-1}" != 0 ]; then
  echo "== the Python tests under PyTorch $compat (scripts/test-torch-compat.sh)"
  "$root/scripts/test-torch-compat.sh" "$compat" 2>&1 | tee "$logs/compat"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  count "$logs/compat"
fi

if [ "${GNNC_TEST_SANITIZERS:-1}" != 0 ]; then
  echo "== ASan + UBSan build and ctest (scripts/test-sanitizers.sh)"
  "$root/scripts/test-sanitizers.sh" 2>&1 | tee "$logs/asan"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  count "$logs/asan"
  echo "== fuzz targets, ${GNNC_FUZZ_SECONDS:-5} s each (scripts/fuzz.sh)"
  "$root/scripts/fuzz.sh" all "${GNNC_FUZZ_SECONDS:-5}" 2>&1 | tee "$logs/fuzz"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  count "$logs/fuzz"
fi

echo "$skipped skipped (they need a GPU; listed by ctest above)"
echo "$passed passed, $failed failed"
exit "$status"
