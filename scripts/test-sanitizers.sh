#!/usr/bin/env bash
# Builds gnnc with clang, AddressSanitizer and UndefinedBehaviorSanitizer (and
# the libFuzzer targets) into ${GNNC_ASAN_BUILD_DIR:-build-asan}, without the
# CUDA runtime, and runs the lit and unit tests under it. Exits non-zero on
# any failure or sanitizer report; the last lines are ctest's summary.
# The options below are what uninstrumented MLIR/LLVM archives need (see
# docs/Reliability.md, "Sanitizers").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_ASAN_BUILD_DIR:-$root/build-asan}"
clang="${GNNC_CLANG:-clang++-22}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="${clang/clang++/clang}" -DCMAKE_CXX_COMPILER="$clang" \
    -DGNNC_SANITIZE=address,undefined -DGNNC_BUILD_FUZZERS=ON \
    -DGNNC_ENABLE_CUDA=OFF -DGNNC_BUILD_PYTHON=OFF \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm
fi
cmake --build "$build" -j "${GNNC_JOBS:-$(nproc)}"

# allow_user_poisoning=0: LLVM's allocators poison and unpoison memory from
# inline header code (instrumented here) and from the archives (not), so the
# two disagree (without it: use-after-poison reports in MLIRContext setup).
export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$build"
ctest --output-on-failure -j "${GNNC_JOBS:-$(nproc)}"
