#!/usr/bin/env bash
# The main job at this stage: build if needed, then run an example layer on a
# graph with the reference evaluator and print its JSON summary.
#   scripts/run.sh [example] [graph] [extra gnn-run options...]
# Defaults: the GCN example on Cora (../shared/datasets/cora).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GNNC_BUILD_DIR:-$root/build}"
example="${1:-gcn}"
graph="${2:-cora}"
shift $(( $# > 2 ? 2 : $# ))

"$root/scripts/install-deps.sh" >&2
"$root/scripts/build.sh" >&2
cd "$root"
exec "$build/bin/gnn-run" "examples/$example.mlir" --graph="$graph" \
  --backend=reference "$@"
