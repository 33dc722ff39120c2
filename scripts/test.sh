#!/usr/bin/env bash
# The one test command: installs dependencies, builds, and runs every test
# (GoogleTest and lit, through ctest). Exits non-zero on any failure; the last
# lines are ctest's summary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "${GNNC_JOBS:-$(nproc)}"
