#!/usr/bin/env bash
# Builds gnnc (Python package included) and runs
# examples/python/train_cora.py with the given arguments (default: a 2-layer
# GCN on Cora, 200 epochs, one seed) in the .venv that install-deps.sh makes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh" >/dev/null
"$root/scripts/build.sh" >/dev/null
venv="${GNNC_VENV:-$root/.venv}"
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
  exec "$venv/bin/python" "$root/examples/python/train_cora.py" "$@"
