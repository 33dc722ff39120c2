# Sourced by the one-call GPU scripts (issue28_gpu.sh, reliability_gpu.sh)
# with CARRY and OUT as $1 and $2: sets B (CARRY), R (OUT), D (the data
# sets), the package under /tmp/pkg on PYTHONPATH, the kernel cache, and
# t PART (a progress line in $R/progress.txt).
export PATH=/usr/local/cuda/bin:$PATH
B=$(realpath "$1"); R=$(realpath -m "$2"); mkdir -p "$R"; D=$B/datasets
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$R/device.txt"
mkdir -p /tmp/pkg; cp -r python/gnnc /tmp/pkg/; cp "$B"/py312/_gnnc*.so /tmp/pkg/gnnc/
export PYTHONPATH=/tmp/pkg GNNC_DATASETS=$D GNNC_CACHE_DIR=/tmp/gnnc-kernels
mkdir -p -m 700 /tmp/gnnc-kernels
t() { echo "== $1 $(date +%T)" >> "$R/progress.txt"; }
