#!/usr/bin/env bash
# Configures (once) and builds gnnc into ${GNNC_BUILD_DIR:-build}.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_BUILD_DIR:-$root/build}"

# The Python package is built for the environment install-deps.sh made.
venv="${GNNC_VENV:-$root/.venv}"
python_args=()
if [ -x "$venv/bin/python" ]; then
  python_args=(-DPython_EXECUTABLE="$venv/bin/python")
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja "${python_args[@]}" \
    -DCMAKE_BUILD_TYPE="${GNNC_BUILD_TYPE:-Release}" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm
fi
cmake --build "$build" -j "${GNNC_JOBS:-$(nproc)}"
