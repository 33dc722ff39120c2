//===- Sampling.cu - neighbour sampling on the device ---------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Floyd.h"
#include "gnn/Runtime/Sampling.h"

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

using namespace gnn::runtime;

namespace {

constexpr int kThreads = 128;

/// Each frontier node's sample count; the first position whose id is out of
/// range, or whose offsets decrease, into *flag (atomicMin; the flag starts
/// above every position; such a position counts 0).
__global__ void hopCountKernel(const int64_t *indptr, int64_t numNodes,
                               const int64_t *frontier, int64_t rows, int64_t k,
                               bool replace, int64_t *counts,
                               unsigned long long *flag) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t f = frontier[i], c = 0;
    int64_t d = f < 0 || f >= numNodes ? -1 : indptr[f + 1] - indptr[f];
    if (d < 0)
      atomicMin(flag, static_cast<unsigned long long>(i));
    else
      c = k < 0 ? d : replace ? (d > 0 ? k : 0) : (d < k ? d : k);
    counts[i] = c;
  }
}

/// A thread per sample: its frontier position (a binary search of the
/// inclusive ends) and, unless Floyd's rows write it, its CSC position.
__global__ void hopSlotsKernel(const int64_t *indptr, const int64_t *frontier,
                               int64_t rows, int64_t k, bool replace,
                               const int64_t *seed, const int64_t *counts,
                               const int64_t *ends, int64_t total, int64_t *pos,
                               int64_t *owner) {
  uint64_t key = static_cast<uint64_t>(*seed);
  for (int64_t s = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; s < total;
       s += int64_t(gridDim.x) * blockDim.x) {
    int64_t a = 0, b = rows - 1; // the first i with ends[i] > s
    while (a < b) {
      int64_t m = a + (b - a) / 2;
      if (ends[m] > s)
        b = m;
      else
        a = m + 1;
    }
    int64_t j = s - (ends[a] - counts[a]);
    int64_t f = frontier[a], lo = indptr[f], d = indptr[f + 1] - lo;
    owner[s] = a;
    if (k < 0 || (!replace && d <= k))
      pos[s] = lo + j;
    else if (replace)
      pos[s] = lo + floyd::draw(key, a, j, d - 1);
  }
}

/// A thread per frontier node of more than k in-edges (without
/// replacement): Floyd's k distinct offsets into its slots.
__global__ void hopFloydKernel(const int64_t *indptr, const int64_t *frontier,
                               int64_t rows, int64_t k, const int64_t *seed,
                               const int64_t *ends, int64_t *pos) {
  uint64_t key = static_cast<uint64_t>(*seed);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t f = frontier[i], lo = indptr[f], d = indptr[f + 1] - lo;
    if (d <= k)
      continue;
    int64_t *out = pos + ends[i] - k;
    floyd::chooseRow(key, i, d, k, out);
    for (int64_t j = 0; j < k; ++j)
      out[j] += lo;
  }
}

/// A new node's first occurrence: the smallest position among the sources
/// not in the batch yet (atomicMin into firstMap); the first position whose
/// id is outside [0, numNodes) into *bad (which starts above every one).
__global__ void relabelFirstKernel(const int64_t *src, int64_t count,
                                   int64_t numNodes, const int64_t *localMap,
                                   int64_t *firstMap, unsigned long long *bad) {
  for (int64_t s = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; s < count;
       s += int64_t(gridDim.x) * blockDim.x) {
    int64_t v = src[s];
    if (v < 0 || v >= numNodes)
      atomicMin(bad, static_cast<unsigned long long>(s));
    else if (localMap[v] < 0)
      atomicMin(reinterpret_cast<unsigned long long *>(firstMap + v),
                static_cast<unsigned long long>(s));
  }
}

__global__ void relabelFlagKernel(const int64_t *src, int64_t count,
                                  int64_t numNodes, const int64_t *localMap,
                                  const int64_t *firstMap, int64_t *flags) {
  for (int64_t s = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; s < count;
       s += int64_t(gridDim.x) * blockDim.x) {
    int64_t v = src[s];
    flags[s] = v >= 0 && v < numNodes && localMap[v] < 0 && firstMap[v] == s;
  }
}

/// Every position's local id: the node's own, or numLocal + the rank of its
/// first occurrence. A first occurrence also enters its node in localMap
/// (the value any other occurrence computes, so reading it early agrees).
__global__ void relabelAssignKernel(const int64_t *src, int64_t count,
                                    int64_t numLocal, const int64_t *flags,
                                    const int64_t *ranks, int64_t *localMap,
                                    const int64_t *firstMap, int64_t *local,
                                    int64_t *newNodes) {
  for (int64_t s = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; s < count;
       s += int64_t(gridDim.x) * blockDim.x) {
    int64_t v = src[s];
    if (flags[s]) {
      int64_t id = numLocal + ranks[s];
      local[s] = id;
      newNodes[ranks[s]] = v;
      localMap[v] = id;
      continue;
    }
    int64_t known = localMap[v];
    local[s] = known >= 0 ? known : numLocal + ranks[firstMap[v]];
  }
}

__global__ void relabelResetKernel(const int64_t *newNodes, int64_t numNew,
                                   int64_t *firstMap) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < numNew;
       r += int64_t(gridDim.x) * blockDim.x)
    firstMap[newNodes[r]] = INT64_MAX;
}

unsigned gridFor(int64_t threads) {
  return static_cast<unsigned>(std::min<int64_t>(
      (threads + kThreads - 1) / kThreads, int64_t(65535) * 16));
}

Status launched(const char *what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::error(std::string("launching ") + what + ": " +
                         cudaGetErrorName(e));
  return Status();
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

StatusOr<const void *> gnn::runtime::deviceView(const void *p,
                                                const char *what) {
  cudaPointerAttributes attr{};
  cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess || attr.devicePointer == nullptr ||
      (attr.type != cudaMemoryTypeHost && attr.type != cudaMemoryTypeDevice &&
       attr.type != cudaMemoryTypeManaged)) {
    cudaGetLastError(); // clear a failed query
    return Status::error(std::string(what) +
                         " is neither device memory nor pinned host memory "
                         "(pin it with Tensor.pin_memory())");
  }
  return static_cast<const void *>(attr.devicePointer);
}

Status gnn::runtime::readBack(void *host, const void *device, size_t bytes,
                              cudaStream_t stream) {
  cudaError_t e =
      cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess)
    return Status::error(std::string("reading back ") + std::to_string(bytes) +
                         " bytes: " + cudaGetErrorName(e));
  return Status();
}

size_t gnn::runtime::sampleHopTempBytes(int64_t rows) {
  size_t bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, bytes,
                                static_cast<const int64_t *>(nullptr),
                                static_cast<int64_t *>(nullptr),
                                static_cast<int>(std::max<int64_t>(rows, 1)));
  return std::max<size_t>(bytes, 1);
}

Status gnn::runtime::sampleHopCount(const int64_t *indptr, int64_t numNodes,
                                    const int64_t *frontier, int64_t rows,
                                    int64_t k, bool replace, int64_t *counts,
                                    int64_t *ends, int64_t *flag, void *temp,
                                    cudaStream_t stream) {
  // 0x7f bytes: a flag above every position (none out of range).
  if (cudaMemsetAsync(flag, 0x7f, sizeof(int64_t), stream) != cudaSuccess)
    return launched("the hop's range flag");
  if (rows <= 0)
    return Status();
  if (rows > INT32_MAX)
    return Status::error("sampleHopCount: more than 2^31 - 1 frontier nodes");
  hopCountKernel<<<gridFor(rows), kThreads, 0, stream>>>(
      indptr, numNodes, frontier, rows, k, replace, counts,
      reinterpret_cast<unsigned long long *>(flag));
  GNN_RETURN_IF_ERROR(launched("the hop's counts"));
  size_t bytes = sampleHopTempBytes(rows);
  cudaError_t e = cub::DeviceScan::InclusiveSum(temp, bytes, counts, ends,
                                                static_cast<int>(rows), stream);
  if (e != cudaSuccess)
    return Status::error(std::string("the hop's scan: ") + cudaGetErrorName(e));
  return Status();
}

Status gnn::runtime::sampleHopFill(const int64_t *indptr,
                                   const int64_t *frontier, int64_t rows,
                                   int64_t k, bool replace, const int64_t *seed,
                                   const int64_t *counts, const int64_t *ends,
                                   int64_t total, int64_t *pos, int64_t *owner,
                                   cudaStream_t stream) {
  if (total <= 0)
    return Status();
  hopSlotsKernel<<<gridFor(total), kThreads, 0, stream>>>(
      indptr, frontier, rows, k, replace, seed, counts, ends, total, pos,
      owner);
  GNN_RETURN_IF_ERROR(launched("the hop's samples"));
  if (replace || k < 0)
    return Status();
  hopFloydKernel<<<gridFor(rows), kThreads, 0, stream>>>(indptr, frontier, rows,
                                                         k, seed, ends, pos);
  return launched("the hop's subset draw");
}

size_t gnn::runtime::relabelTempBytes(int64_t count) {
  size_t bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes,
                                static_cast<const int64_t *>(nullptr),
                                static_cast<int64_t *>(nullptr),
                                static_cast<int>(std::max<int64_t>(count, 1)));
  return std::max<size_t>(bytes, 1);
}

Status gnn::runtime::relabelMark(const int64_t *src, int64_t count,
                                 int64_t numNodes, const int64_t *localMap,
                                 int64_t *firstMap, int64_t *flags,
                                 int64_t *ranks, int64_t *bad, void *temp,
                                 cudaStream_t stream) {
  if (count <= 0)
    return Status();
  if (count >= INT32_MAX)
    return Status::error("relabelMark: 2^31 - 1 or more sampled edges");
  // 0x7f bytes: above every position (no id out of range).
  if (cudaMemsetAsync(bad, 0x7f, sizeof(int64_t), stream) != cudaSuccess)
    return launched("the relabelling's range flag");
  relabelFirstKernel<<<gridFor(count), kThreads, 0, stream>>>(
      src, count, numNodes, localMap, firstMap,
      reinterpret_cast<unsigned long long *>(bad));
  GNN_RETURN_IF_ERROR(launched("the relabelling's first occurrences"));
  relabelFlagKernel<<<gridFor(count), kThreads, 0, stream>>>(
      src, count, numNodes, localMap, firstMap, flags);
  GNN_RETURN_IF_ERROR(launched("the relabelling's flags"));
  if (cudaMemsetAsync(flags + count, 0, sizeof(int64_t), stream) != cudaSuccess)
    return launched("the relabelling's last flag");
  size_t bytes = relabelTempBytes(count + 1);
  cudaError_t e = cub::DeviceScan::ExclusiveSum(
      temp, bytes, flags, ranks, static_cast<int>(count + 1), stream);
  if (e != cudaSuccess)
    return Status::error(std::string("the relabelling's scan: ") +
                         cudaGetErrorName(e));
  return Status();
}

Status gnn::runtime::relabelAssign(const int64_t *src, int64_t count,
                                   int64_t numLocal, const int64_t *flags,
                                   const int64_t *ranks, int64_t numNew,
                                   int64_t *localMap, int64_t *firstMap,
                                   int64_t *local, int64_t *newNodes,
                                   cudaStream_t stream) {
  if (count <= 0)
    return Status();
  relabelAssignKernel<<<gridFor(count), kThreads, 0, stream>>>(
      src, count, numLocal, flags, ranks, localMap, firstMap, local, newNodes);
  GNN_RETURN_IF_ERROR(launched("the relabelling"));
  if (numNew <= 0)
    return Status();
  relabelResetKernel<<<gridFor(numNew), kThreads, 0, stream>>>(newNodes, numNew,
                                                               firstMap);
  return launched("the relabelling's reset");
}

Status gnn::runtime::gatherRows(const void *table, int64_t rows,
                                int64_t rowBytes, const int64_t *index,
                                int64_t count, void *out, cudaStream_t stream) {
  if (count <= 0 || rowBytes <= 0)
    return Status();
  // Pinned host memory is read through its device mapping (unified
  // addressing: the same pointer); device memory directly.
  StatusOr<const void *> view = deviceView(table, "gatherRows: the table");
  if (!view.ok())
    return view.error();
  const void *from = *view;
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
  return launched("the row gather");
}
