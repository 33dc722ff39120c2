//===- Sampling.cu - neighbour sampling on the device ---------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Floyd.h"
#include "gnn/Runtime/Sampling.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

using namespace gnn::runtime;

namespace {

constexpr int kThreads = 128;

__global__ void floydKernel(const int64_t *deg, int64_t rows, int64_t k,
                            const int64_t *seed, int64_t *out) {
  uint64_t s = static_cast<uint64_t>(*seed);
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows;
       r += int64_t(gridDim.x) * blockDim.x)
    floyd::chooseRow(s, r, deg[r], k, out + r * k);
}

} // namespace

Status gnn::runtime::chooseSubsets(const int64_t *deg, int64_t rows, int64_t k,
                                   const int64_t *seed, int64_t *out,
                                   cudaStream_t stream) {
  if (rows <= 0)
    return Status();
  if (k < 1)
    return Status::error("chooseSubsets: k must be at least 1, got " +
                         std::to_string(k));
  int64_t blocks =
      std::min<int64_t>((rows + kThreads - 1) / kThreads, int64_t(65535) * 16);
  floydKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      deg, rows, k, seed, out);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::error(std::string("launching the subset sampler: ") +
                         cudaGetErrorName(e));
  return Status();
}
