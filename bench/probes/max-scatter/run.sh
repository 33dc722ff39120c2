#!/usr/bin/env bash
# The probe behind bench/results/tie-walks-h100/probe-*.txt: the max
# backward's scatter kernels on graphs dumped by the peers' dump_graph.py
# (lines "src dst", a "# nodes N" header), timed with CUDA events.
#   bench/probes/max-scatter/run.sh GNN_OPT OLD_GNN_RUN NEW_GNN_RUN GRAPH.txt...
# OLD_GNN_RUN: a build from before the block walks (a5580e5); NEW_GNN_RUN:
# one after. Their extremum_grad_0 kernels (gnn-run --dump-cuda) and
# variants of the old one (sed) go into kernels.cu beside probe.cu. Needs
# nvcc and an sm_90 GPU.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
opt=$1 old=$2 new=$3; shift 3
tmp=$(mktemp -d)
cat > "$tmp/max.mlir" <<'MLIR'
func.func @max(%g: !gnn.graph, %x: tensor<?x128xf32> {gnn.differentiable}) -> tensor<?x128xf32> {
  %o = gnn.spmm max %g, %x : tensor<?x128xf32> -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
MLIR
"$opt" --gnn-autodiff "$tmp/max.mlir" > "$tmp/ad.mlir"
for v in old new; do
  run=$old; [ $v = new ] && run=$new
  "$run" "$tmp/ad.mlir" --function=max_bwd --graph="$1" --backend=cuda \
    --compile-only --arch=sm_90 --dump-cuda="$tmp/$v.cu" > /dev/null
done
kernel() { sed -n '/extremum_grad_0(/,$p' "$tmp/$1.cu"; }
{
  echo 'typedef int idx_t;'
  echo '__device__ __forceinline__ long long gnn_ceildivsi(long long a, long long b) {'
  echo '  const long long q = a / b, r = a % b;'
  echo '  return (r != 0 && ((r < 0) == (b < 0))) ? q + 1 : q;'
  echo '}'
  sed -n '/__device__ __forceinline__ unsigned gnn_segment_mask/,/^}/p' "$tmp/old.cu"
  kernel old
  kernel old | sed -e 's/extremum_grad_0(/extremum_grad_16(/' -e 's/#pragma unroll 4/#pragma unroll 16/'
  for u in 4 16; do
    kernel old | sed -e "s/extremum_grad_0(/extremum_ord$u(/" -e "s/#pragma unroll 4/#pragma unroll $u/" \
      -e 's/const float \*__restrict__ in3) {/const float *__restrict__ in3, const idx_t *__restrict__ byDeg) {/' \
      -e 's|const long long v5 = (long long)((unsigned long long)row3 / 4ull);|const long long v5 = (long long)__ldg(byDeg + (v0 - 1 - (long long)((unsigned long long)row3 / 4ull)));|'
  done
  kernel old | sed -e 's/extremum_grad_0(/extremum_ties(/' -e 's/#pragma unroll 4/#pragma unroll 16/' \
    -e 's/const bool v12 = v11 >= 0.0f;/const bool v12 = false;/'
  for u in 4 16; do
    kernel old | sed -e "s/extremum_grad_0(/iso$u(/" -e "s/#pragma unroll 4/#pragma unroll $u/" \
      -e 's/const bool v12 = v11 >= 0.0f;/const bool v12 = false;/' \
      -e 's/const float \*__restrict__ in3) {/const float *__restrict__ in3, long long boff) {/' \
      -e 's/const long long t2 = blockIdx.x \* (long long)blockDim.x + threadIdx.x;/const long long t2 = (blockIdx.x + boff) * (long long)blockDim.x + threadIdx.x;/'
  done
  kernel new | sed 's/extremum_grad_0(/egnew(/'
  kernel new | sed 's/extremum_grad_0(/egor(/' | perl -0pe \
    's/ *__shared__ int (red\d+)\[8\]\[32\];\n *\1\[team\d+\]\[lane\d+\] = (v\d+);\n *__syncthreads\(\);\n *int (acc\d+) = .*?\n *\}\n *__syncthreads\(\);\n/    int $3 = __syncthreads_or($2) ? 0xff : 0;\n/s'
} > "$tmp/kernels.cu"
grep -q __syncthreads_or "$tmp/kernels.cu" || { echo "egor: the block reduction was not found" >&2; exit 1; }
nvcc -O3 -arch=sm_90 -std=c++17 -I"$tmp" "$here/probe.cu" -o "$tmp/probe"
for g in "$@"; do
  echo "== $g"
  "$tmp/probe" "$g"
done
