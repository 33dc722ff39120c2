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
