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

/// Row i of `out` = row index[i] of `table`, a warp per row, in 16-, 4- or
/// 1-byte words (whatever the row size and the pointers' alignment allow).
template <typename W>
__global__ void gatherRowsKernel(const W *table, int64_t rows, int64_t words,
                                 const int64_t *index, int64_t count, W *out) {
  int64_t warp = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  int64_t warps = int64_t(gridDim.x) * blockDim.x / 32;
  for (int64_t i = warp; i < count; i += warps) {
    int64_t r = index[i];
    W *to = out + i * words;
    if (r < 0 || r >= rows) { // the loader's ids never are: zeros, not a fault
      for (int64_t w = lane; w < words; w += 32)
        to[w] = W{};
      continue;
    }
    const W *from = table + r * words;
    for (int64_t w = lane; w < words; w += 32)
      to[w] = from[w];
  }
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

Status gnn::runtime::gatherRows(const void *table, int64_t rows,
                                int64_t rowBytes, const int64_t *index,
                                int64_t count, void *out, cudaStream_t stream) {
  if (count <= 0 || rowBytes <= 0)
    return Status();
  // Pinned host memory is read through its device mapping (unified
  // addressing: the same pointer); device memory directly.
  cudaPointerAttributes attr{};
  cudaError_t e = cudaPointerGetAttributes(&attr, table);
  if (e != cudaSuccess || attr.devicePointer == nullptr ||
      (attr.type != cudaMemoryTypeHost && attr.type != cudaMemoryTypeDevice &&
       attr.type != cudaMemoryTypeManaged)) {
    cudaGetLastError(); // clear a failed query
    return Status::error(
        "gatherRows: the table is neither device memory nor "
        "pinned host memory (pin it with Tensor.pin_memory())");
  }
  const void *from = attr.devicePointer;
  auto aligned = [&](int64_t n) {
    return rowBytes % n == 0 && reinterpret_cast<uintptr_t>(from) % n == 0 &&
           reinterpret_cast<uintptr_t>(out) % n == 0;
  };
  int64_t blocks = std::min<int64_t>((count * 32 + kThreads - 1) / kThreads,
                                     int64_t(65535) * 16);
  unsigned grid = static_cast<unsigned>(blocks);
  if (aligned(16))
    gatherRowsKernel<uint4><<<grid, kThreads, 0, stream>>>(
        static_cast<const uint4 *>(from), rows, rowBytes / 16, index, count,
        static_cast<uint4 *>(out));
  else if (aligned(4))
    gatherRowsKernel<uint32_t><<<grid, kThreads, 0, stream>>>(
        static_cast<const uint32_t *>(from), rows, rowBytes / 4, index, count,
        static_cast<uint32_t *>(out));
  else
    gatherRowsKernel<unsigned char><<<grid, kThreads, 0, stream>>>(
        static_cast<const unsigned char *>(from), rows, rowBytes, index, count,
        static_cast<unsigned char *>(out));
  e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::error(std::string("launching the row gather: ") +
                         cudaGetErrorName(e));
  return Status();
}
