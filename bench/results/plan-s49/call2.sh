#!/usr/bin/env bash
# Session 49, call 2 (one GPU, this tree's Python): where a layer call's host
# time goes inside the op (bench/probes/hostprof/sample_layers.py under
# sampler.c, .carry/tools/libsampler.so), then the CUDA tests of the layers
# and the core.
set -u
export PATH=/usr/local/cuda/bin:$PATH
B=$(realpath .carry); R=$OUT; D=$B/datasets
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$R/device.txt"
mkdir -p /tmp/pkg; cp -r python/gnnc /tmp/pkg/; cp "$B"/py312/_gnnc*.so /tmp/pkg/gnnc/
export PYTHONPATH=/tmp/pkg GNNC_DATASETS=$D GNNC_CACHE_DIR=/tmp/gnnc-kernels
mkdir -p -m 700 /tmp/gnnc-kernels
t() { echo "== $1 $(date +%T)" >> "$R/progress.txt"; }
t sample
python3 bench/probes/hostprof/sample_layers.py "$B/tools/libsampler.so" /tmp/samples \
  gin gcn sage_mean > "$R/sample.txt" 2>&1
tar czf "$R/samples.tgz" -C /tmp samples
t tests
(cd python/tests && python3 -m pytest -q -p no:cacheprovider test_nn_cuda.py test_core.py \
   > "$R/pytest.txt" 2>&1)
tail -2 "$R/pytest.txt" >> "$R/progress.txt"
t done
