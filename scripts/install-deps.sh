#!/usr/bin/env bash
# Installs what gnnc needs to build and test on a fresh Debian machine (as
# root): LLVM/MLIR 22, CMake, Ninja, a C++ compiler, GoogleTest, and clang 22
# with its sanitizer and libFuzzer runtimes (the sanitizer build and the fuzz
# targets). Packages that are already installed are skipped, so this is cheap
# to run every time.
set -euo pipefail

packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  clang-22 libclang-rt-22-dev libfuzzer-22-dev
  libzstd-dev zlib1g-dev
  cmake ninja-build g++ libgtest-dev nlohmann-json3-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# The Python package's build and tests: a virtual environment (default
# .venv in the repository, GNNC_VENV to move it) with nanobind, pytest, NumPy,
# PyTorch and PyTorch Geometric from PyPI. PyPI's torch wheel for Linux pulls
# the CUDA libraries too (about 5 GB, 1-2 minutes on a fast link); the tests
# use its CPU path only. GNNC_PYTHON=0 skips this (the package is then not
# built).
if [ "${GNNC_PYTHON:-1}" != 0 ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  venv="${GNNC_VENV:-$root/.venv}"
  python="${GNNC_PYTHON_EXE:-python3}"
  if [ ! -x "$venv/bin/python" ]; then
    echo "install-deps: creating $venv"
    "$python" -m venv "$venv"
  fi
  if ! "$venv/bin/python" -c "import nanobind, pytest, numpy, torch, torch_geometric" \
      >/dev/null 2>&1; then
    echo "install-deps: installing the Python test dependencies into $venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q nanobind pytest numpy torch torch_geometric
  else
    echo "install-deps: Python packages present in $venv"
  fi
fi
