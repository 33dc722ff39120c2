#!/usr/bin/env bash
# The Python package's tests under a second PyTorch: the package is built
# once, against the main environment's PyTorch (.venv), through PyTorch's
# stable ABI, and claims to load and work in any PyTorch >= 2.10; this runs
# the whole pytest suite with that same build in an environment holding
# PyTorch VERSION (default 2.11.0, what the GPU machine runs; its
# torch.compile differs: a compiled-layer failure that only 2.11 showed
# reached users once). Needs build/ from scripts/build.sh.
#
#   scripts/test-torch-compat.sh [VERSION]
#
# The environment is .venv-torch-VERSION in the repository (GNNC_COMPAT_VENV
# to move it), made with the Python that made .venv. The last line is
# `N passed, N failed` (pytest's skips counted apart).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_BUILD_DIR:-$root/build}"
version="${1:-2.11.0}"
venv="${GNNC_COMPAT_VENV:-$root/.venv-torch-$version}"
main="${GNNC_VENV:-$root/.venv}"

fail() { echo "test-torch-compat: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
[ -d "$build/python/gnnc" ] || fail "no package in $build/python (run scripts/build.sh first)"
if [ ! -x "$venv/bin/python" ]; then
  # The same Python as the build's (the module is built for its version).
  base=$("$main/bin/python" -c "import sys; print(sys._base_executable)") ||
    fail "no main environment $main (scripts/install-deps.sh makes it)"
  echo "test-torch-compat: creating $venv"
  "$base" -m venv "$venv" || fail "could not create $venv"
fi
if ! "$venv/bin/python" -c "import torch, torch_geometric, pytest, numpy, sys; \
    sys.exit(torch.__version__.split('+')[0] != '$version')" >/dev/null 2>&1; then
  echo "test-torch-compat: installing PyTorch $version, PyTorch Geometric and pytest into $venv"
  "$venv/bin/python" -m pip install -q --upgrade pip &&
    "$venv/bin/python" -m pip install -q "torch==$version" torch_geometric pytest numpy ||
    fail "could not install PyTorch $version"
fi
"$venv/bin/python" -c "import torch; print('test-torch-compat: PyTorch', torch.__version__)"
log=$(mktemp); trap 'rm -f "$log"' EXIT
( cd "$root/python/tests" &&
  PYTHONPATH="$build/python" PATH="$build/bin:$PATH" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider . ) 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# pytest's closing line: "N passed, M skipped, K failed, ... in T s".
line=$(grep -E '^(=+ )?[0-9]+ (passed|failed)' "$log" | tail -1)
p=$(grep -oE '[0-9]+ passed' <<<"$line" | cut -d' ' -f1)
f=0
for n in $(grep -oE '[0-9]+ (failed|error|errors)' <<<"$line" | cut -d' ' -f1); do
  f=$((f + n))
done
[ "$status" -eq 0 ] || [ "${f:-0}" -gt 0 ] || f=1
echo "${p:-0} passed, ${f:-0} failed"
exit "$status"
