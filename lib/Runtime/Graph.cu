//===- Graph.cu - graphs on the GPU ---------------------------------------===//
//
// Part of gnnc. CSR and CSC come from stable radix sorts of packed
// (major << bits | minor) keys, so each row lists its neighbours in increasing
// order and duplicates keep their edge-list order; the sorts use only
// 2 * ceil(log2 N) key bits.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/EdgeHash.h"
#include "gnn/Graph/HostGraph.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Environment.h"
#include "gnn/Runtime/Graph.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>
#include <sstream>
#include <type_traits>

using namespace gnn::runtime;

//===----------------------------------------------------------------------===//
// Errors and buffers
//===----------------------------------------------------------------------===//

static Status checkCuda(const char *call, cudaError_t e) {
  if (e == cudaSuccess)
    return Status();
  return Status::error(std::string(call) + ": " + cudaGetErrorName(e) + " (" +
                       cudaGetErrorString(e) + ")");
}

#define GNN_CUDA(call) GNN_RETURN_IF_ERROR(checkCuda(#call, (call)))

/// The runtime's device must be usable before any CUDA runtime call: this
/// gives the "no CUDA driver" / "no CUDA device" errors their clear form.
/// With GNNC_DEVICE set (gnn-run on another device than 0) it also makes
/// that device the calling thread's current one, once; otherwise the current
/// device is the caller's (PyTorch's device guards), never changed here.
static Status ensureDevice() {
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver.ok())
    return driver.error();
  static Status once = [ordinal = (*driver)->ordinal()] {
    if (environment().deviceOrdinal >= 0) {
      Status s = checkCuda("cudaSetDevice", cudaSetDevice(ordinal));
      if (!s.ok())
        return s;
    }
    // Keep freed memory in the pool: graph builds allocate the same sizes
    // again and again.
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, ordinal) == cudaSuccess) {
      uint64_t keep = std::numeric_limits<uint64_t>::max();
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    return Status();
  }();
  return once;
}

StatusOr<DeviceMemoryInfo> gnn::runtime::deviceMemoryInfo() {
  GNN_RETURN_IF_ERROR(ensureDevice());
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver.ok())
    return driver.error();
  GNN_RETURN_IF_ERROR((*driver)->makeCurrent());
  size_t freeBytes = 0, totalBytes = 0;
  GNN_RETURN_IF_ERROR(
      checkCu(**driver, "cuMemGetInfo",
              (*driver)->fn().cuMemGetInfo(&freeBytes, &totalBytes)));
  DeviceMemoryInfo info;
  info.freeBytes = static_cast<int64_t>(freeBytes);
  info.totalBytes = static_cast<int64_t>(totalBytes);
  // Freed buffers stay in the pool (see ensureDevice): reserved but unused
  // memory is free for gnnc.
  cudaMemPool_t pool;
  uint64_t reserved = 0, used = 0;
  if (cudaDeviceGetDefaultMemPool(&pool, (*driver)->ordinal()) == cudaSuccess &&
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent,
                              &reserved) == cudaSuccess &&
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) ==
          cudaSuccess &&
      reserved > used)
    info.freeBytes += static_cast<int64_t>(reserved - used);
  return info;
}

StatusOr<DeviceBuffer> DeviceBuffer::allocate(size_t bytes,
                                              cudaStream_t stream) {
  GNN_RETURN_IF_ERROR(ensureDevice());
  DeviceBuffer b;
  b.bytes = bytes;
  if (bytes == 0)
    return std::move(b);
  cudaError_t e = cudaMallocAsync(&b.ptr, bytes, stream);
  if (e != cudaSuccess)
    return Status::error("cudaMallocAsync of " + std::to_string(bytes) +
                         " bytes: " + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
  return std::move(b);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr)
    cudaFreeAsync(ptr, 0);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : ptr(o.ptr), bytes(o.bytes) {
  o.ptr = nullptr;
  o.bytes = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    if (ptr)
      cudaFreeAsync(ptr, 0);
    ptr = o.ptr;
    bytes = o.bytes;
    o.ptr = nullptr;
    o.bytes = 0;
  }
  return *this;
}

Status DeviceBuffer::upload(const void *host, size_t count) {
  if (count > bytes)
    return Status::error("upload of " + std::to_string(count) +
                         " bytes into a buffer of " + std::to_string(bytes));
  if (count)
    GNN_CUDA(cudaMemcpy(ptr, host, count, cudaMemcpyHostToDevice));
  return Status();
}

Status DeviceBuffer::download(void *host, size_t count) const {
  if (count > bytes)
    return Status::error("download of " + std::to_string(count) +
                         " bytes from a buffer of " + std::to_string(bytes));
  if (count)
    GNN_CUDA(cudaMemcpy(host, ptr, count, cudaMemcpyDeviceToHost));
  return Status();
}


//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

constexpr int kThreads = 256;

unsigned blocksFor(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(b, 65535 * 16)));
}

#define GRID_STRIDE(i, n)                                                      \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);    \
       i += int64_t(gridDim.x) * blockDim.x)

/// The largest and the smallest of some graph sizes.
struct GraphExtremes {
  long long largest, smallest;
};

/// Per-build results read back with one copy at the end.
struct BuildResults {
  unsigned long long badEdge, unsortedBatch, crossingEdge;
  unsigned long long isolated, selfLoops;
  /// Wrapping sums of edgeHash over the edges and over their reverses:
  /// equal iff the graph is symmetric (GraphStats::directed, as the host's
  /// computeStats decides it).
  unsigned long long forwardHash, backwardHash;
  /// Set when some CSR slot holds another edge than its own index.
  unsigned long long reordered;
  /// Set when some edge's destination is below the one before it
  /// (GraphBuildOptions::dstSorted was wrong).
  unsigned long long unsortedDst;
  unsigned long long rowsByDegree[::gnn::GraphStats::kDegreeBuckets];
  unsigned long long edgesByDegree[::gnn::GraphStats::kDegreeBuckets];
  long long quantiles[5]; ///< p50, p90, p99, p99.9, max of in-degrees
  int maxOutDegree;
  /// graph_ptr's entries (graphs + 1) and the extremes of the graph sizes
  /// (largest 0 and smallest LLONG_MAX without graphs).
  long long graphBounds;
  GraphExtremes graphExtremes;
};

/// Counts per block, then one atomic per block: counters of power-law graphs
/// must not serialise on one address.
__device__ __forceinline__ void blockCount(bool flag, unsigned long long *counter) {
  int c = __syncthreads_count(flag);
  if (threadIdx.x == 0 && c)
    atomicAdd(counter, static_cast<unsigned long long>(c));
}

/// Validates ids (sources below ns, targets below nd: both the node count,
/// or a bipartite graph's sides); key = destination, value = edge id.
/// Invalid ids are recorded and clamped so that later kernels stay in
/// bounds; the build is discarded at the end. Also records whether the
/// destinations ever decrease (GraphBuildOptions::dstSorted is checked with
/// the results).
template <typename T, typename I>
__global__ void validateAndKey(const T *src, const T *dst, int64_t e, int64_t ns,
                               int64_t nd, unsigned *keys, I *values,
                               BuildResults *res) {
  for (int64_t base = blockIdx.x * int64_t(blockDim.x); base < e;
       base += int64_t(gridDim.x) * blockDim.x) {
    int64_t i = base + threadIdx.x;
    bool down = false;
    if (i < e) {
      T s = src[i], d = dst[i];
      bool bad = s < 0 || s >= ns || d < 0 || d >= nd;
      if (bad) {
        atomicMin(&res->badEdge, static_cast<unsigned long long>(i));
        d = 0;
      }
      down = i > 0 && d < dst[i - 1];
      keys[i] = static_cast<unsigned>(d);
      values[i] = static_cast<I>(i);
    }
    if (__syncthreads_or(down) && threadIdx.x == 0)
      res->unsortedDst = 1;
  }
}

template <typename T>
__global__ void validateBatch(const int64_t *batch, const T *src, const T *dst,
                              int64_t n, int64_t e, BuildResults *res) {
  GRID_STRIDE(i, n) {
    if (batch[i] < 0 || (i > 0 && batch[i] < batch[i - 1]))
      atomicMin(&res->unsortedBatch, static_cast<unsigned long long>(i));
  }
  GRID_STRIDE(i, e) {
    T s = src[i], d = dst[i];
    if (s >= 0 && s < n && d >= 0 && d < n && batch[s] != batch[d])
      atomicMin(&res->crossingEdge, static_cast<unsigned long long>(i));
  }
}

/// The CSR slots' sources and destinations from the edge each slot holds
/// and the destinations in slot order (invalid sources clamped to 0: such
/// a build is discarded).
template <typename T, typename I>
__global__ void csrFromSorted(const T *src, const unsigned *sortedDst,
                              const I *csrEdges, int64_t e, int64_t n, I *col,
                              I *csrDst) {
  GRID_STRIDE(i, e) {
    T s = src[static_cast<int64_t>(csrEdges[i])];
    col[i] = static_cast<I>(s < 0 || s >= n ? 0 : s);
    csrDst[i] = static_cast<I>(sortedDst[i]);
  }
}

template <typename I> struct SortedId {
  const I *ids;
  __device__ int64_t operator()(int64_t i) const {
    return static_cast<int64_t>(ids[i]);
  }
};

/// ptr[r], r in [0, n]: the first of the e sorted positions whose major id is
/// at least r, by a binary search per row. Every row costs the same, however
/// the edges spread: filling the rows between neighbouring edges' ids instead
/// made one thread walk every row after the last edge's (a sampled batch's
/// graph, whose edges all enter the first few thousand of its 200K nodes,
/// took 0.6 ms on an H200).
template <typename I, typename Major>
__global__ void ptrFromSorted(Major major, int64_t e, int64_t n, I *ptr) {
  GRID_STRIDE(r, n + 1) {
    int64_t lo = 0, hi = e;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (major(mid) < r)
        lo = mid + 1;
      else
        hi = mid;
    }
    ptr[r] = static_cast<I>(lo);
  }
}

template <typename I> __global__ void iota(I *out, int64_t e) {
  GRID_STRIDE(i, e) { out[i] = static_cast<I>(i); }
}


/// CSC slot j holds CSR slot p = cscToCsr[j]: its edge and destination.
template <typename I>
__global__ void gatherCsc(const I *cscToCsr, const I *csrEdge, const I *csrDst,
                          int64_t e, I *cscEdge, I *cscRow) {
  GRID_STRIDE(j, e) {
    I p = cscToCsr[j];
    cscEdge[j] = csrEdge[p];
    cscRow[j] = csrDst[p];
  }
}

template <typename I>
__global__ void degreesFromPtr(const I *rowPtr, const I *colPtr, int64_t n,
                               int *inDeg, int *outDeg) {
  GRID_STRIDE(i, n) {
    inDeg[i] = static_cast<int>(rowPtr[i + 1] - rowPtr[i]);
    outDeg[i] = static_cast<int>(colPtr[i + 1] - colPtr[i]);
  }
}

/// Isolated nodes, self-loops and asymmetry (CSR == CSC as sorted lists),
/// counted per block.
template <typename I>
__global__ void countStats(const int *inDeg, const int *outDeg, int64_t n,
                           const I *csrCol, const I *csrDst, int64_t e,
                           BuildResults *res) {
  int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t limit = n > e ? n : e;
  unsigned long long forward = 0, backward = 0;
  for (int64_t base = blockIdx.x * int64_t(blockDim.x); base < limit;
       base += stride) {
    int64_t i = base + threadIdx.x;
    bool isolated = i < n && inDeg[i] == 0 && outDeg[i] == 0;
    bool loop = i < e && csrCol[i] == csrDst[i];
    if (i < e) {
      int64_t s = static_cast<int64_t>(csrCol[i]), d = static_cast<int64_t>(csrDst[i]);
      forward += ::gnn::edgeHash(s, d);
      backward += ::gnn::edgeHash(d, s);
    }
    blockCount(isolated, &res->isolated);
    blockCount(loop, &res->selfLoops);
  }
  // Wrapping sums: exact and independent of the order they are added in.
  for (int o = 16; o; o >>= 1) {
    forward += __shfl_xor_sync(0xffffffffu, forward, o);
    backward += __shfl_xor_sync(0xffffffffu, backward, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&res->forwardHash, forward);
    atomicAdd(&res->backwardHash, backward);
  }
}

/// The bucket of GraphStats::bucketOf: degrees 0 and 1 in bucket 0, degree d
/// > 1 in bucket ceil(log2(d)), capped at the last.
__device__ __forceinline__ int degreeBucket(int degree) {
  int k = degree > 1 ? 32 - __clz(degree - 1) : 0;
  return k < ::gnn::GraphStats::kDegreeBuckets ? k : ::gnn::GraphStats::kDegreeBuckets - 1;
}

/// The in-degree histogram (per block in shared memory, then one integer
/// atomic per bucket and block: exact and order-independent) and whether
/// the edges were already in CSR order.
template <typename I>
__global__ void histogramAndOrder(const int *inDeg, int64_t n,
                                  const I *csrEdges, int64_t e,
                                  BuildResults *res) {
  constexpr int B = ::gnn::GraphStats::kDegreeBuckets;
  __shared__ unsigned long long rows[B], edges[B];
  for (int k = threadIdx.x; k < B; k += blockDim.x)
    rows[k] = edges[k] = 0;
  __syncthreads();
  bool reordered = false;
  int64_t limit = n > e ? n : e;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < limit;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (i < n) {
      int d = inDeg[i], k = degreeBucket(d);
      atomicAdd(&rows[k], 1ull);
      atomicAdd(&edges[k], static_cast<unsigned long long>(d));
    }
    reordered |= i < e && static_cast<int64_t>(csrEdges[i]) != i;
  }
  if (__syncthreads_or(reordered) && threadIdx.x == 0)
    res->reordered = 1;
  for (int k = threadIdx.x; k < B; k += blockDim.x) {
    if (rows[k])
      atomicAdd(&res->rowsByDegree[k], rows[k]);
    if (edges[k])
      atomicAdd(&res->edgesByDegree[k], edges[k]);
  }
}

/// The in-degree quantiles (nearest ranks r0..r3 and the largest) of the
/// ascending in-degrees.
__global__ void pickRanks(const unsigned *sorted, int64_t n, int64_t r0,
                          int64_t r1, int64_t r2, int64_t r3,
                          BuildResults *res) {
  if (threadIdx.x == 0 && n > 0) {
    res->quantiles[0] = sorted[r0];
    res->quantiles[1] = sorted[r1];
    res->quantiles[2] = sorted[r2];
    res->quantiles[3] = sorted[r3];
    res->quantiles[4] = sorted[n - 1];
  }
}

/// The last (largest) of `n` > 0 ascending degrees.
__global__ void largestOf(const unsigned *sorted, int64_t n, int *out) {
  if (threadIdx.x == 0 && n > 0)
    *out = static_cast<int>(sorted[n - 1]);
}

__global__ void countPerGraph(const int64_t *batch, int64_t n, int *counts,
                              int64_t graphs) {
  GRID_STRIDE(i, n) {
    int64_t g = batch[i];
    if (g >= 0 && g < graphs)
      atomicAdd(counts + g, 1);
  }
}

/// How many edges cross a position, counted modulo 2^32 or 2^64: 32 bits
/// hold any count of a 32-bit graph (fewer than 2^31 edges); a 64-bit
/// graph's would wrap through 0 past 2^32 and split a graph there.
template <typename I>
using CrossingCount =
    std::conditional_t<sizeof(I) == 8, unsigned long long, unsigned>;

/// +1 after each edge's lower end and -1 after its upper end: the prefix
/// sum is the number of edges crossing each position. Runs before the ids
/// are known to be valid (the build is discarded if they are not): ids
/// outside [0, n) are skipped.
template <typename I>
__global__ void markCrossings(const I *src, const I *dst, int64_t e, int64_t n,
                              CrossingCount<I> *cover) {
  using C = CrossingCount<I>;
  GRID_STRIDE(i, e) {
    long long a = src[i], b = dst[i];
    long long lo = a < b ? a : b, hi = a < b ? b : a;
    if (0 <= lo && lo < hi && hi < n) {
      atomicAdd(cover + lo + 1, C(1));
      atomicAdd(cover + hi + 1, ~C(0)); // -1 modulo 2^bits
    }
  }
}

/// Whether no edge crosses a position (a graph starts there, or it is the
/// end).
template <typename C> struct Uncrossed {
  __host__ __device__ bool operator()(C crossing) const {
    return crossing == 0;
  }
};

/// Graph k's node count (as both extremes) for k < bounds - 1, where bounds
/// is read on the device (graph_ptr's entries; the rest of the range are
/// neutral): the sizes need not be known on the host to be reduced.
template <typename I> struct GraphSizeAt {
  const I *ptr;
  const long long *bounds;
  __host__ __device__ GraphExtremes operator()(long long k) const {
    if (k + 1 >= *bounds)
      return {0, std::numeric_limits<long long>::max()};
    long long size = ptr[k + 1] - ptr[k];
    return {size, size};
  }
};

struct MergeExtremes {
  __host__ __device__ GraphExtremes operator()(GraphExtremes a,
                                               GraphExtremes b) const {
    return {a.largest > b.largest ? a.largest : b.largest,
            a.smallest < b.smallest ? a.smallest : b.smallest};
  }
};

template <typename I>
__global__ void iotaFlags(const int *inDeg, int64_t n, int threshold, I *ids,
                          char *heavy, char *light) {
  GRID_STRIDE(i, n) {
    ids[i] = static_cast<I>(i);
    heavy[i] = inDeg[i] > threshold;
    light[i] = inDeg[i] <= threshold;
  }
}

template <typename T>
__global__ void widenIndex(const T *in, int64_t n, long long *out) {
  GRID_STRIDE(i, n) { out[i] = static_cast<long long>(in[i]); }
}

} // namespace

/// Nearest-rank index of quantile q over n sorted values.
static int64_t rankOf(double q, int64_t n) {
  if (n == 0)
    return 0;
  int64_t r = static_cast<int64_t>(std::ceil(q * n)) - 1;
  return std::min(std::max<int64_t>(r, 0), n - 1);
}

//===----------------------------------------------------------------------===//
// The builder
//===----------------------------------------------------------------------===//

namespace gnn {
namespace runtime {

template <typename I> struct GraphBuilder {
  template <typename T>
  static Status run(Graph &g, const T *src, const T *dst, int64_t e, int64_t n,
                    const int64_t *batch, cudaStream_t stream,
                    const GraphBuildOptions &options);
};

} // namespace runtime
} // namespace gnn

namespace {
/// Allocations of one build, in the order of the stream it runs on (a build
/// under a side stream must not use memory ordered on another one), with
/// the error of the first failure.
struct Arena {
  explicit Arena(cudaStream_t stream) : stream(stream) {}
  cudaStream_t stream;
  Status status;
  DeviceBuffer take(size_t bytes) {
    if (!status.ok())
      return DeviceBuffer();
    StatusOr<DeviceBuffer> b = DeviceBuffer::allocate(bytes, stream);
    if (!b.ok()) {
      status = b.error();
      return DeviceBuffer();
    }
    return std::move(*b);
  }
};

/// Unsigned view of an index type, for radix sorting nonnegative ids.
template <typename I> struct UnsignedOf;
template <> struct UnsignedOf<int32_t> { using type = uint32_t; };
template <> struct UnsignedOf<int64_t> { using type = unsigned long long; };
} // namespace

/// One CUB radix sort of pairs, with its temporary storage.
template <typename K, typename V>
static Status radixSortPairs(Arena &arena, const K *keysIn, K *keysOut,
                             const V *valsIn, V *valsOut, int64_t count,
                             int endBit, cudaStream_t stream) {
  size_t bytes = 0;
  GNN_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keysIn, keysOut,
                                           valsIn, valsOut, count, 0, endBit,
                                           stream));
  DeviceBuffer temp = arena.take(std::max<size_t>(bytes, 1));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keysIn, keysOut,
                                           valsIn, valsOut, count, 0, endBit,
                                           stream));
  return Status();
}

/// The extremes of the sizes of the graphs that `ptr`'s first `*bounds`
/// entries delimit (at most `items` graphs) into `*out`; asynchronous.
template <typename I>
static Status graphExtremes(Arena &arena, const I *ptr, const long long *bounds,
                            int64_t items, GraphExtremes *out,
                            cudaStream_t stream) {
  auto sizes = thrust::make_transform_iterator(
      thrust::counting_iterator<long long>(0), GraphSizeAt<I>{ptr, bounds});
  GraphExtremes none{0, std::numeric_limits<long long>::max()};
  size_t bytes = 0;
  GNN_CUDA(cub::DeviceReduce::Reduce(nullptr, bytes, sizes, out, items,
                                     MergeExtremes(), none, stream));
  DeviceBuffer temp = arena.take(std::max<size_t>(bytes, 1));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cub::DeviceReduce::Reduce(temp.data(), bytes, sizes, out, items,
                                     MergeExtremes(), none, stream));
  return Status();
}

/// graph_ptr without a batch: the positions of [0, n] that no edge crosses,
/// their count into `res->graphBounds` and the extremes of the graph sizes
/// into `res->graphExtremes`; asynchronous, read back with the rest of
/// `res`. `ptr` has room for n + 1 entries.
template <typename I>
static Status rangesNoEdgeCrosses(Arena &arena, const I *src, const I *dst,
                                  int64_t e, int64_t n, I *ptr,
                                  BuildResults *res, cudaStream_t stream) {
  using C = CrossingCount<I>;
  DeviceBuffer cover = arena.take((n + 1) * sizeof(C));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cudaMemsetAsync(cover.data(), 0, (n + 1) * sizeof(C), stream));
  if (e)
    markCrossings<I>
        <<<blocksFor(e), kThreads, 0, stream>>>(src, dst, e, n, cover.as<C>());
  GNN_CUDA(cudaGetLastError());
  // The crossing counts in place, then the positions where they are 0.
  thrust::counting_iterator<I> ids(0);
  auto uncrossed =
      thrust::make_transform_iterator(cover.as<C>(), Uncrossed<C>());
  size_t scanBytes = 0, selectBytes = 0;
  GNN_CUDA(cub::DeviceScan::InclusiveSum(nullptr, scanBytes, cover.as<C>(),
                                         n + 1, stream));
  GNN_CUDA(cub::DeviceSelect::Flagged(nullptr, selectBytes, ids, uncrossed, ptr,
                                      &res->graphBounds, n + 1, stream));
  DeviceBuffer temp = arena.take(std::max<size_t>({scanBytes, selectBytes, 1}));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cub::DeviceScan::InclusiveSum(temp.data(), scanBytes, cover.as<C>(),
                                         n + 1, stream));
  GNN_CUDA(cub::DeviceSelect::Flagged(temp.data(), selectBytes, ids, uncrossed,
                                      ptr, &res->graphBounds, n + 1, stream));
  if (n)
    GNN_RETURN_IF_ERROR(graphExtremes<I>(arena, ptr, &res->graphBounds, n,
                                         &res->graphExtremes, stream));
  return Status();
}

template <typename I>
template <typename T>
Status GraphBuilder<I>::run(Graph &g, const T *src, const T *dst, int64_t e,
                            int64_t n, const int64_t *batch,
                            cudaStream_t stream,
                            const GraphBuildOptions &options) {
  using U = typename UnsignedOf<I>::type;
  Arena arena(stream);
  int bits = 1;
  while ((int64_t(1) << bits) < n)
    ++bits;

  DeviceBuffer resultsBuf = arena.take(sizeof(BuildResults));
  // keysIn is reused for the CSC sort's sources (e * sizeof(U)).
  DeviceBuffer keysIn = arena.take(e * 8);
  DeviceBuffer keysOut = options.dstSorted ? DeviceBuffer() : arena.take(e * 4);
  DeviceBuffer valsIn = arena.take(e * sizeof(I));
  g.csrDsts = arena.take(e * sizeof(I));
  DeviceBuffer &csrDst = g.csrDsts;
  if (!options.dstSorted)
    g.csrEdges = arena.take(e * sizeof(I));
  g.col = arena.take(e * sizeof(I));
  g.rowPtr = arena.take((n + 1) * sizeof(I));
  g.colPtr = arena.take((n + 1) * sizeof(I));
  g.row = arena.take(e * sizeof(I));
  g.cscEdges = arena.take(e * sizeof(I));
  g.cscToCsrSlots = arena.take(e * sizeof(I));
  g.inDeg = arena.take(n * sizeof(int));
  g.outDeg = arena.take(n * sizeof(int));
  g.rowsByDegree = arena.take(n * sizeof(I));
  g.colsByDegree = arena.take(n * sizeof(I));
  GNN_RETURN_IF_ERROR(arena.status);
  auto *res = resultsBuf.as<BuildResults>();
  BuildResults init{};
  init.badEdge = init.unsortedBatch = init.crossingEdge = ~0ull;
  GNN_CUDA(cudaMemcpyAsync(res, &init, sizeof(init), cudaMemcpyHostToDevice,
                           stream));

  // CSR: the edges in a stable sort by destination (within a row in
  // edge-list order, the order the reference sums in), carrying edge ids;
  // rows from the boundaries. Edges known to be sorted by destination
  // already (options.dstSorted: a CSR adjacency's, a sampled batch's) are
  // their own CSR: no sort; the claim is checked with the results and a
  // wrong one rebuilds with the sort.
  int64_t ns = options.numSrc >= 0 ? std::min(options.numSrc, n) : n;
  int64_t nd = options.numDst >= 0 ? std::min(options.numDst, n) : n;
  g.srcNodes = ns;
  g.dstNodes = nd;
  if (e)
    validateAndKey<T, I><<<blocksFor(e), kThreads, 0, stream>>>(
        src, dst, e, ns, nd, keysIn.as<unsigned>(), valsIn.as<I>(), res);
  if (batch && n)
    validateBatch<T><<<blocksFor(std::max(n, e)), kThreads, 0, stream>>>(
        batch, src, dst, n, e, res);
  GNN_CUDA(cudaGetLastError());
  const unsigned *sortedDst = keysIn.as<unsigned>();
  if (options.dstSorted) {
    g.csrEdges = std::move(valsIn); // the identity
  } else {
    GNN_RETURN_IF_ERROR(radixSortPairs(arena, keysIn.as<unsigned>(),
                                       keysOut.as<unsigned>(), valsIn.as<I>(),
                                       g.csrEdges.as<I>(), e, bits, stream));
    sortedDst = keysOut.as<unsigned>();
  }
  if (e)
    csrFromSorted<T, I><<<blocksFor(e), kThreads, 0, stream>>>(
        src, sortedDst, g.csrEdges.as<I>(), e, n, g.col.as<I>(),
        csrDst.as<I>());
  ptrFromSorted<I><<<blocksFor(n + 1), kThreads, 0, stream>>>(
      SortedId<I>{csrDst.as<I>()}, e, n, g.rowPtr.as<I>());
  GNN_CUDA(cudaGetLastError());

  // CSC: a stable sort of the CSR slots by source. The CSR order is
  // (dst, edge order), so the result is (src, dst, edge order) and its
  // values are the CSR slots: the permutation directly.
  DeviceBuffer sortedSrc = std::move(keysIn); // reuse: e * 8 >= e * sizeof(I)
  DeviceBuffer slots = options.dstSorted ? arena.take(e * sizeof(I))
                                         : std::move(valsIn);
  GNN_RETURN_IF_ERROR(arena.status);
  if (e)
    iota<I><<<blocksFor(e), kThreads, 0, stream>>>(slots.as<I>(), e);
  GNN_RETURN_IF_ERROR(radixSortPairs(
      arena, reinterpret_cast<const U *>(g.col.as<I>()), sortedSrc.as<U>(),
      slots.as<I>(), g.cscToCsrSlots.as<I>(), e, bits, stream));
  ptrFromSorted<I><<<blocksFor(n + 1), kThreads, 0, stream>>>(
      SortedId<I>{reinterpret_cast<const I *>(sortedSrc.as<U>())}, e, n,
      g.colPtr.as<I>());
  if (e)
    gatherCsc<I><<<blocksFor(e), kThreads, 0, stream>>>(
        g.cscToCsrSlots.as<I>(), g.csrEdges.as<I>(), csrDst.as<I>(), e,
        g.cscEdges.as<I>(), g.row.as<I>());
  if (n)
    degreesFromPtr<I><<<blocksFor(n), kThreads, 0, stream>>>(
        g.rowPtr.as<I>(), g.colPtr.as<I>(), n, g.inDeg.as<int>(),
        g.outDeg.as<int>());
  GNN_CUDA(cudaGetLastError());

  // Rows (CSR) and columns (CSC) in increasing degree, ties by id (a stable
  // sort of the ids by degree; the max/min backward reads the densest row
  // from the end). The sorted degrees also give the in-degree quantiles and
  // the largest out-degree (no sort or reduction of their own).
  if (n) {
    int degreeBits = 1;
    while ((int64_t(1) << degreeBits) <= e)
      ++degreeBits;
    DeviceBuffer ids = arena.take(n * sizeof(I));
    DeviceBuffer sortedDegrees = arena.take(n * sizeof(int));
    GNN_RETURN_IF_ERROR(arena.status);
    iota<I><<<blocksFor(n), kThreads, 0, stream>>>(ids.as<I>(), n);
    GNN_CUDA(cudaGetLastError());
    struct Order {
      const DeviceBuffer *degrees;
      DeviceBuffer *ids;
      bool in;
    };
    for (Order o : {Order{&g.inDeg, &g.rowsByDegree, true},
                    Order{&g.outDeg, &g.colsByDegree, false}}) {
      GNN_RETURN_IF_ERROR(radixSortPairs(
          arena, reinterpret_cast<const unsigned *>(o.degrees->as<int>()),
          sortedDegrees.as<unsigned>(), ids.as<I>(), o.ids->as<I>(), n,
          degreeBits, stream));
      if (o.in && options.statistics)
        pickRanks<<<1, 32, 0, stream>>>(sortedDegrees.as<unsigned>(), n,
                                        rankOf(0.5, n), rankOf(0.9, n),
                                        rankOf(0.99, n), rankOf(0.999, n), res);
      if (!o.in)
        largestOf<<<1, 32, 0, stream>>>(sortedDegrees.as<unsigned>(), n,
                                        &res->maxOutDegree);
      GNN_CUDA(cudaGetLastError());
    }
  }

  ::gnn::GraphStats &st = g.stats;
  st.nodes = n;
  st.edges = e;

  // Statistics, all asynchronous; read back with the results below.
  if (options.statistics && n) {
    countStats<I><<<blocksFor(std::max(n, e)), kThreads, 0, stream>>>(
        g.inDeg.as<int>(), g.outDeg.as<int>(), n, g.col.as<I>(), csrDst.as<I>(),
        e, res);
    histogramAndOrder<I><<<blocksFor(std::max(n, e)), kThreads, 0, stream>>>(
        g.inDeg.as<int>(), n, g.csrEdges.as<I>(), e, res);
    GNN_CUDA(cudaGetLastError());
  }
  // Per-graph node offsets (graph_ptr, graphs + 1 entries; block-per-graph
  // kernels run a block per graph) without a batch: the finest split of the
  // ids into ranges that no edge crosses (HostGraph's graphOffsets). A
  // batch's graphs follow once the batch is known to be valid.
  if (!batch || !n) {
    g.graphPtr = arena.take((n + 1) * sizeof(I));
    GNN_RETURN_IF_ERROR(arena.status);
    GNN_RETURN_IF_ERROR(
        rangesNoEdgeCrosses<I>(arena, g.col.as<I>(), csrDst.as<I>(), e, n,
                               g.graphPtr.as<I>(), res, stream));
  }
  BuildResults out{};
  GNN_CUDA(cudaMemcpyAsync(&out, res, sizeof(out), cudaMemcpyDeviceToHost,
                           stream));
  GNN_CUDA(cudaStreamSynchronize(stream));

  // Errors found on the way: the build is discarded.
  if (options.dstSorted && out.unsortedDst && out.badEdge == ~0ull) {
    // The edges were not sorted by destination after all: built again
    // with the sort (the buffers taken above are freed when replaced).
    GraphBuildOptions sorting = options;
    sorting.dstSorted = false;
    return run(g, src, dst, e, n, batch, stream, sorting);
  }
  if (out.badEdge != ~0ull) {
    T s = 0, d = 0;
    GNN_CUDA(cudaMemcpy(&s, src + out.badEdge, sizeof(T), cudaMemcpyDeviceToHost));
    GNN_CUDA(cudaMemcpy(&d, dst + out.badEdge, sizeof(T), cudaMemcpyDeviceToHost));
    std::string where = "edge_index[:, " + std::to_string(out.badEdge) +
                        "] = (" + std::to_string(s) + ", " + std::to_string(d) + ")";
    if (ns == n && nd == n)
      return Status::error(where + " has a node id outside [0, " +
                           std::to_string(n) + ")");
    return Status::error(where + " has a source id outside [0, " +
                         std::to_string(ns) + ") or a target id outside [0, " +
                         std::to_string(nd) + ") (a bipartite graph)");
  }
  if (batch && out.unsortedBatch != ~0ull) {
    int64_t here = 0, before = 0;
    int64_t at = static_cast<int64_t>(out.unsortedBatch);
    GNN_CUDA(cudaMemcpy(&here, batch + at, 8, cudaMemcpyDeviceToHost));
    if (at > 0)
      GNN_CUDA(cudaMemcpy(&before, batch + at - 1, 8, cudaMemcpyDeviceToHost));
    return Status::error("batch must be nonnegative and sorted, but batch[" +
                         std::to_string(at) + "] = " + std::to_string(here) +
                         (at > 0 ? " follows " + std::to_string(before)
                                 : std::string()));
  }
  if (batch && out.crossingEdge != ~0ull)
    return Status::error("edge " + std::to_string(out.crossingEdge) +
                         " joins nodes of two different graphs of the batch");

  st.maxOutDegree = out.maxOutDegree;
  // Set without nodes too: an empty edge list is in CSR order (the
  // statistics kernels do not run, so nothing counts as reordered).
  if (options.statistics)
    st.csrOrder = out.reordered == 0;
  if (options.statistics && n) {
    st.p50 = out.quantiles[0];
    st.p90 = out.quantiles[1];
    st.p99 = out.quantiles[2];
    st.p999 = out.quantiles[3];
    st.maxInDegree = out.quantiles[4];
    st.isolatedNodes = static_cast<int64_t>(out.isolated);
    st.selfLoops = static_cast<int64_t>(out.selfLoops);
    st.directed = out.forwardHash != out.backwardHash;
    for (int k = 0; k < ::gnn::GraphStats::kDegreeBuckets; ++k) {
      st.rowsByDegree[k] = static_cast<int64_t>(out.rowsByDegree[k]);
      st.edgesByDegree[k] = static_cast<int64_t>(out.edgesByDegree[k]);
    }
  }
  auto setGraphs = [&st](long long bounds, GraphExtremes extremes) {
    st.graphs = bounds - 1;
    st.largestGraph = st.graphs ? extremes.largest : 0;
    st.smallestGraph = st.graphs ? extremes.smallest : 0;
  };
  if (!batch || !n) {
    setGraphs(out.graphBounds, out.graphExtremes);
    return Status();
  }
  // A batch's graphs: nodes per graph id, then a 0, whose exclusive sum is
  // graph_ptr (an id without nodes is an empty graph).
  int64_t last = 0;
  GNN_CUDA(cudaMemcpy(&last, batch + n - 1, 8, cudaMemcpyDeviceToHost));
  long long bounds = last + 2;
  DeviceBuffer counts = arena.take(bounds * sizeof(int));
  g.graphPtr = arena.take(bounds * sizeof(I));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cudaMemsetAsync(counts.data(), 0, bounds * sizeof(int), stream));
  countPerGraph<<<blocksFor(n), kThreads, 0, stream>>>(
      batch, n, counts.as<int>(), bounds - 1);
  GNN_CUDA(cudaGetLastError());
  size_t bytes = 0;
  GNN_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts.as<int>(),
                                         g.graphPtr.as<I>(), bounds, stream));
  DeviceBuffer temp = arena.take(std::max<size_t>(bytes, 1));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, counts.as<int>(),
                                         g.graphPtr.as<I>(), bounds, stream));
  GNN_CUDA(cudaMemcpyAsync(&res->graphBounds, &bounds, sizeof(bounds),
                           cudaMemcpyHostToDevice, stream));
  GNN_RETURN_IF_ERROR(graphExtremes<I>(arena, g.graphPtr.as<I>(),
                                       &res->graphBounds, bounds - 1,
                                       &res->graphExtremes, stream));
  GraphExtremes extremes{};
  GNN_CUDA(cudaMemcpyAsync(&extremes, &res->graphExtremes, sizeof(extremes),
                           cudaMemcpyDeviceToHost, stream));
  GNN_CUDA(cudaStreamSynchronize(stream));
  setGraphs(bounds, extremes);
  return Status();
}

Status Graph::usedOn(cudaStream_t stream) const {
  if (stream == nullptr || stream == cudaStreamLegacy)
    return Status();
  // A stream capturing a CUDA graph: the graph's work runs when it is
  // launched, and an event recorded in the capture cannot be waited on
  // outside it. Keeping the graph alive while a CUDA graph may replay its
  // kernels is the caller's (torch.compile's graph trees look the graph up
  // on every call).
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  GNN_CUDA(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return Status();
  std::lock_guard<std::mutex> lock(usesMutex);
  cudaEvent_t event = nullptr;
  for (auto &[s, e] : uses)
    if (s == stream)
      event = e;
  if (!event) {
    GNN_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    uses.emplace_back(stream, event);
  }
  GNN_CUDA(cudaEventRecord(event, stream));
  return Status();
}

Graph::~Graph() {
  // The buffers below are freed after this body, in the default stream's
  // order: behind the last use on every other stream. Events stay valid
  // when their stream is destroyed.
  for (auto &[stream, event] : uses) {
    (void)cudaStreamWaitEvent(cudaStreamLegacy, event, 0);
    (void)cudaEventDestroy(event);
  }
}

StatusOr<std::unique_ptr<Graph>>
Graph::build(const void *src, const void *dst, int64_t numEdges,
             int64_t numNodes, IndexType inputType, const int64_t *batch,
             cudaStream_t stream, GraphBuildOptions options) {
  if (numEdges < 0 || numNodes < 0)
    return Status::error("expected nonnegative sizes but got " +
                         std::to_string(numNodes) + " nodes and " +
                         std::to_string(numEdges) + " edges");
  if (numEdges > 0 && (!src || !dst))
    return Status::error("edge_index has " + std::to_string(numEdges) +
                         " edges but a null source or destination array");
  if (numNodes >= (int64_t(1) << 31))
    return Status::error("graphs of 2^31 nodes or more are not supported "
                         "(got " + std::to_string(numNodes) + ")");
  GNN_RETURN_IF_ERROR(ensureDevice());
  std::unique_ptr<Graph> g(new Graph);
  bool wide = options.force64 || numEdges >= (int64_t(1) << 31) - 1;
  g->index = wide ? IndexType::Int64 : IndexType::Int32;
  Status s;
  if (!wide && inputType == IndexType::Int32)
    s = GraphBuilder<int32_t>::run(*g, static_cast<const int32_t *>(src),
                                   static_cast<const int32_t *>(dst), numEdges,
                                   numNodes, batch, stream, options);
  else if (!wide)
    s = GraphBuilder<int32_t>::run(*g, static_cast<const int64_t *>(src),
                                   static_cast<const int64_t *>(dst), numEdges,
                                   numNodes, batch, stream, options);
  else if (inputType == IndexType::Int32)
    s = GraphBuilder<int64_t>::run(*g, static_cast<const int32_t *>(src),
                                   static_cast<const int32_t *>(dst), numEdges,
                                   numNodes, batch, stream, options);
  else
    s = GraphBuilder<int64_t>::run(*g, static_cast<const int64_t *>(src),
                                   static_cast<const int64_t *>(dst), numEdges,
                                   numNodes, batch, stream, options);
  if (!s.ok())
    return s.withContext("building the graph");
  return std::move(g);
}

//===----------------------------------------------------------------------===//
// Edge types
//===----------------------------------------------------------------------===//

/// csr_type[s] = types[csr_edge[s]]; the largest id into `most` and the
/// first negative (or, with 32-bit indices, too large) id's edge + 1 into
/// `bad` (atomicMin over edges + 1; 0: none).
template <typename I, typename T>
__global__ void typesToSlots(const T *types, const I *csrEdge, int64_t e,
                             I *csrType, unsigned long long *most,
                             unsigned long long *bad) {
  int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (s >= e)
    return;
  int64_t edge = (int64_t)csrEdge[s];
  long long t = (long long)types[edge];
  if (t < 0 || (sizeof(I) == 4 && t > 2147483647LL)) {
    atomicMin(bad, (unsigned long long)edge + 1);
    t = 0;
  }
  csrType[s] = (I)t;
  atomicMax(most, (unsigned long long)t);
}

template <typename I, typename T>
static Status typesKernel(const void *types, const void *csrEdge, int64_t e,
                          void *csrType, unsigned long long *words,
                          cudaStream_t stream) {
  if (e)
    typesToSlots<I, T><<<blocksFor(e), kThreads, 0, stream>>>(
        static_cast<const T *>(types), static_cast<const I *>(csrEdge), e,
        static_cast<I *>(csrType), words, words + 1);
  return checkCuda("typesToSlots", cudaGetLastError());
}

Status Graph::setEdgeTypes(const void *types, IndexType typesType,
                           cudaStream_t stream) {
  int64_t e = stats.edges;
  if (e && !types)
    return Status::error("edge types: null pointer for " + std::to_string(e) +
                         " edges");
  size_t isz = index == IndexType::Int32 ? 4 : 8;
  StatusOr<DeviceBuffer> slots = DeviceBuffer::allocate(e * isz, stream);
  if (!slots.ok())
    return slots.error();
  StatusOr<DeviceBuffer> words = DeviceBuffer::allocate(16, stream);
  if (!words.ok())
    return words.error();
  unsigned long long host[2] = {0, ~0ull};
  GNN_CUDA(cudaMemcpyAsync(words->data(), host, 16, cudaMemcpyHostToDevice,
                           stream));
  auto *w = words->as<unsigned long long>();
  bool i32 = index == IndexType::Int32, t32 = typesType == IndexType::Int32;
  Status launched =
      i32 ? (t32 ? typesKernel<int32_t, int32_t>(types, csrEdges.data(), e,
                                                 slots->data(), w, stream)
                 : typesKernel<int32_t, int64_t>(types, csrEdges.data(), e,
                                                 slots->data(), w, stream))
          : (t32 ? typesKernel<int64_t, int32_t>(types, csrEdges.data(), e,
                                                 slots->data(), w, stream)
                 : typesKernel<int64_t, int64_t>(types, csrEdges.data(), e,
                                                 slots->data(), w, stream));
  GNN_RETURN_IF_ERROR(launched);
  GNN_CUDA(cudaMemcpyAsync(host, words->data(), 16, cudaMemcpyDeviceToHost,
                           stream));
  GNN_CUDA(cudaStreamSynchronize(stream));
  if (host[1] != ~0ull) {
    int64_t edge = static_cast<int64_t>(host[1]) - 1;
    return Status::error("edge_type[" + std::to_string(edge) +
                         "] is not a relation id in [0, " +
                         (i32 ? std::string("2^31)") : std::string("2^63)")));
  }
  csrTypes = std::move(*slots);
  hasTypes = true;
  relationCount = e ? static_cast<int64_t>(host[0]) + 1 : 0;
  return Status();
}

StatusOr<std::unique_ptr<Graph>> Graph::fromHost(const gnn::HostGraph &host,
                                                 cudaStream_t stream,
                                                 GraphBuildOptions options) {
  std::string invalid = host.validate();
  if (!invalid.empty())
    return Status::error(invalid);
  if (host.bipartite() && options.numSrc < 0 && options.numDst < 0) {
    options.numSrc = host.numSrc;
    options.numDst = host.numDst;
  }
  int64_t e = host.numEdges(), n = host.numNodes;
  StatusOr<DeviceBuffer> src = DeviceBuffer::allocate(e * 8);
  if (!src.ok())
    return src.error();
  StatusOr<DeviceBuffer> dst = DeviceBuffer::allocate(e * 8);
  if (!dst.ok())
    return dst.error();
  GNN_RETURN_IF_ERROR(src->upload(host.src.data(), e * 8));
  GNN_RETURN_IF_ERROR(dst->upload(host.dst.data(), e * 8));
  DeviceBuffer batch;
  if (!host.graphIds.empty()) {
    StatusOr<DeviceBuffer> b = DeviceBuffer::allocate(n * 8);
    if (!b.ok())
      return b.error();
    batch = std::move(*b);
    GNN_RETURN_IF_ERROR(batch.upload(host.graphIds.data(), n * 8));
  }
  StatusOr<std::unique_ptr<Graph>> g = build(
      src->data(), dst->data(), e, n, IndexType::Int64, batch.as<int64_t>(),
      stream, options);
  if (!g.ok() || !host.typed())
    return g;
  // The types through the source list's buffer (no longer needed).
  GNN_RETURN_IF_ERROR(src->upload(host.edgeTypes.data(), e * 8));
  GNN_RETURN_IF_ERROR((*g)->setEdgeTypes(src->data(), IndexType::Int64, stream));
  return g;
}

StatusOr<DegreeBuckets> Graph::buckets(double quantile,
                                       cudaStream_t stream) const {
  if (!(quantile >= 0 && quantile <= 1))
    return Status::error("expected a quantile in [0, 1] but got " +
                         std::to_string(quantile));
  int64_t n = stats.nodes;
  DegreeBuckets out;
  Arena arena(stream);
  DeviceBuffer sorted = arena.take(n * sizeof(int));
  size_t bytes = 0;
  GNN_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, inDeg.as<int>(),
                                          sorted.as<int>(), n, 0, 32, stream));
  DeviceBuffer temp = arena.take(std::max<size_t>(bytes, 1));
  GNN_RETURN_IF_ERROR(arena.status);
  int threshold = 0;
  if (n) {
    GNN_CUDA(cub::DeviceRadixSort::SortKeys(temp.data(), bytes,
                                            inDeg.as<int>(), sorted.as<int>(),
                                            n, 0, 32, stream));
    GNN_CUDA(cudaMemcpyAsync(&threshold,
                             sorted.as<int>() + rankOf(quantile, n),
                             sizeof(int), cudaMemcpyDeviceToHost, stream));
    GNN_CUDA(cudaStreamSynchronize(stream));
  }
  out.threshold = threshold;
  size_t isz = index == IndexType::Int32 ? 4 : 8;
  DeviceBuffer ids = arena.take(n * isz);
  DeviceBuffer heavy = arena.take(n), light = arena.take(n);
  DeviceBuffer counts = arena.take(2 * 8);
  out.heavyRows = arena.take(n * isz);
  out.lightRows = arena.take(n * isz);
  GNN_RETURN_IF_ERROR(arena.status);
  auto select = [&](auto *idsT) -> Status {
    using I = std::remove_pointer_t<decltype(idsT)>;
    if (n)
      iotaFlags<I><<<blocksFor(n), kThreads, 0, stream>>>(
          inDeg.as<int>(), n, threshold, ids.as<I>(), heavy.as<char>(),
          light.as<char>());
    size_t b1 = 0, b2 = 0;
    GNN_CUDA(cub::DeviceSelect::Flagged(nullptr, b1, ids.as<I>(),
                                        heavy.as<char>(), out.heavyRows.as<I>(),
                                        counts.as<long long>(), n, stream));
    GNN_CUDA(cub::DeviceSelect::Flagged(nullptr, b2, ids.as<I>(),
                                        light.as<char>(), out.lightRows.as<I>(),
                                        counts.as<long long>() + 1, n, stream));
    DeviceBuffer t = arena.take(std::max<size_t>({b1, b2, 1}));
    GNN_RETURN_IF_ERROR(arena.status);
    GNN_CUDA(cub::DeviceSelect::Flagged(t.data(), b1, ids.as<I>(),
                                        heavy.as<char>(), out.heavyRows.as<I>(),
                                        counts.as<long long>(), n, stream));
    GNN_CUDA(cub::DeviceSelect::Flagged(t.data(), b2, ids.as<I>(),
                                        light.as<char>(), out.lightRows.as<I>(),
                                        counts.as<long long>() + 1, n, stream));
    long long c[2] = {0, 0};
    GNN_CUDA(cudaMemcpyAsync(c, counts.data(), sizeof(c),
                             cudaMemcpyDeviceToHost, stream));
    GNN_CUDA(cudaStreamSynchronize(stream));
    out.numHeavy = n ? c[0] : 0;
    out.numLight = n ? c[1] : 0;
    return Status();
  };
  Status s = index == IndexType::Int32 ? select(static_cast<int32_t *>(nullptr))
                                       : select(static_cast<int64_t *>(nullptr));
  if (!s.ok())
    return s.withContext("degree buckets");
  return std::move(out);
}

StatusOr<std::vector<int64_t>> Graph::download(const void *array,
                                               int64_t count) const {
  std::vector<int64_t> host(count);
  if (count == 0)
    return host;
  StatusOr<DeviceBuffer> wide = DeviceBuffer::allocate(count * 8);
  if (!wide.ok())
    return wide.error();
  if (index == IndexType::Int32)
    widenIndex<int32_t><<<blocksFor(count), kThreads>>>(
        static_cast<const int32_t *>(array), count, wide->as<long long>());
  else
    widenIndex<int64_t><<<blocksFor(count), kThreads>>>(
        static_cast<const int64_t *>(array), count, wide->as<long long>());
  GNN_CUDA(cudaGetLastError());
  GNN_CUDA(cudaDeviceSynchronize());
  GNN_RETURN_IF_ERROR(wide->download(host.data(), count * 8));
  return host;
}

//===----------------------------------------------------------------------===//
// Change checks without synchronisation.
//===----------------------------------------------------------------------===//

namespace {
__global__ void compareWords(const unsigned long long *a,
                             const unsigned long long *b, int64_t words,
                             const unsigned char *ta, const unsigned char *tb,
                             int64_t tail, unsigned *flag) {
  bool differ = false;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < words;
       i += int64_t(gridDim.x) * blockDim.x)
    differ |= a[i] != b[i];
  if (blockIdx.x == 0 && threadIdx.x < tail)
    differ |= ta[threadIdx.x] != tb[threadIdx.x];
  if (__syncthreads_or(differ) && threadIdx.x == 0)
    *static_cast<volatile unsigned *>(flag) = 1;
}

struct PoisonBatch {
  PoisonTarget t[8];
  int n;
};

// One block: the flag (host memory, read over the bus) is read once, and
// the fill itself only runs in the rare stale case.
__global__ void poisonKernel(PoisonBatch batch, const unsigned *flag) {
  __shared__ unsigned set;
  if (threadIdx.x == 0)
    set = *static_cast<const volatile unsigned *>(flag);
  __syncthreads();
  if (!set)
    return;
  for (int k = 0; k < batch.n; ++k) {
    const PoisonTarget &t = batch.t[k];
    for (int64_t i = threadIdx.x; i < t.count; i += blockDim.x) {
      if (t.dtype == DType::F64)
        static_cast<double *>(t.data)[i] = NAN;
      else if (t.dtype == DType::BF16) // quiet NaNs' bits
        static_cast<unsigned short *>(t.data)[i] = 0x7fc0u;
      else if (t.dtype == DType::F16)
        static_cast<unsigned short *>(t.data)[i] = 0x7e00u;
      else
        static_cast<float *>(t.data)[i] = NAN;
    }
  }
}
} // namespace

namespace {
/// Change flags are words of pinned slabs that are never freed: a flag per
/// new edge_index tensor would otherwise cost a cudaHostAlloc and a
/// cudaFreeHost, which waits for the whole device (sampled training makes
/// one per step). A released word waits behind kFlagQuarantine others
/// before it is handed out again, so a check still in flight for the old
/// tensor cannot mark the new one.
constexpr size_t kFlagsPerSlab = 1024;
constexpr size_t kFlagQuarantine = 256;

struct FlagPool {
  std::mutex mutex;
  std::vector<unsigned *> ready;
  std::deque<unsigned *> released;
};

FlagPool &flagPool() {
  static auto *pool = new FlagPool; // process lifetime, as the slabs
  return *pool;
}
} // namespace

StatusOr<std::unique_ptr<HostFlag>> HostFlag::create() {
  GNN_RETURN_IF_ERROR(ensureDevice());
  FlagPool &pool = flagPool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  if (pool.ready.empty()) {
    void *p = nullptr;
    // Portable: kernels of every device (context) may write it, whichever
    // device was current here.
    cudaError_t e = cudaHostAlloc(&p, kFlagsPerSlab * sizeof(unsigned),
                                  cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess)
      return Status::error(std::string("cudaHostAlloc (change flags): ") +
                           cudaGetErrorName(e));
    auto *words = static_cast<unsigned *>(p);
    for (size_t i = kFlagsPerSlab; i-- > 0;)
      pool.ready.push_back(words + i);
  }
  std::unique_ptr<HostFlag> f(new HostFlag);
  f->value = pool.ready.back();
  pool.ready.pop_back();
  *static_cast<volatile unsigned *>(f->value) = 0;
  return std::move(f);
}

HostFlag::~HostFlag() {
  if (!value)
    return;
  FlagPool &pool = flagPool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.released.push_back(value);
  if (pool.released.size() > kFlagQuarantine) {
    pool.ready.push_back(pool.released.front());
    pool.released.pop_front();
  }
}

Status gnn::runtime::compareAsync(const void *a, const void *b, size_t bytes,
                                  unsigned *flag, cudaStream_t stream) {
  if (!bytes || a == b)
    return Status();
  // 8-byte words (both are allocations of PyTorch's: aligned), then the tail.
  int64_t words = int64_t(bytes / 8), tail = int64_t(bytes % 8);
  const auto *ca = static_cast<const unsigned char *>(a);
  const auto *cb = static_cast<const unsigned char *>(b);
  unsigned blocks = std::min<unsigned>(blocksFor(words), 1024);
  compareWords<<<blocks, kThreads, 0, stream>>>(
      static_cast<const unsigned long long *>(a),
      static_cast<const unsigned long long *>(b), words, ca + words * 8,
      cb + words * 8, tail, flag);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::error(std::string("launching the change check: ") +
                         cudaGetErrorName(e));
  return Status();
}

bool gnn::runtime::streamCapturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return capturing != cudaStreamCaptureStatusNone;
}

Status gnn::runtime::poisonIfFlagged(const std::vector<PoisonTarget> &targets,
                                     const unsigned *flag, cudaStream_t stream) {
  PoisonBatch batch{};
  auto launch = [&]() -> Status {
    if (!batch.n)
      return Status();
    poisonKernel<<<1, 1024, 0, stream>>>(batch, flag);
    batch.n = 0;
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
      return Status::error(std::string("launching the NaN fill of a stale "
                                       "call: ") +
                           cudaGetErrorName(e));
    return Status();
  };
  for (const PoisonTarget &t : targets) {
    if (t.count <= 0)
      continue;
    batch.t[batch.n++] = t;
    if (batch.n == 8)
      GNN_RETURN_IF_ERROR(launch());
  }
  return launch();
}
