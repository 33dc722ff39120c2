//===- Graph.cu - graphs on the GPU ---------------------------------------===//
//
// Part of gnnc. CSR and CSC come from stable radix sorts of packed
// (major << bits | minor) keys, so each row lists its neighbours in increasing
// order and duplicates keep their edge-list order; the sorts use only
// 2 * ceil(log2 N) key bits.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Environment.h"
#include "gnn/Runtime/Graph.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

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
/// gives the "no CUDA driver" / "no CUDA device" errors their clear form and
/// keeps the CUDA runtime API on the primary context of the chosen device.
static Status ensureDevice() {
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver.ok())
    return driver.error();
  static Status once = [] {
    Status s = checkCuda("cudaSetDevice",
                         cudaSetDevice(environment().deviceOrdinal));
    if (!s.ok())
      return s;
    // Keep freed memory in the pool: graph builds allocate the same sizes
    // again and again.
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, environment().deviceOrdinal) ==
        cudaSuccess) {
      uint64_t keep = std::numeric_limits<uint64_t>::max();
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    return Status();
  }();
  return once;
}

StatusOr<DeviceBuffer> DeviceBuffer::allocate(size_t bytes) {
  GNN_RETURN_IF_ERROR(ensureDevice());
  DeviceBuffer b;
  b.bytes = bytes;
  if (bytes == 0)
    return std::move(b);
  cudaError_t e = cudaMallocAsync(&b.ptr, bytes, 0);
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

std::string GraphStatistics::toJson() const {
  std::ostringstream os;
  os << "{\"nodes\": " << nodes << ", \"edges\": " << edges
     << ", \"mean_degree\": " << meanDegree
     << ", \"max_in_degree\": " << maxInDegree
     << ", \"max_out_degree\": " << maxOutDegree << ", \"p50\": " << p50
     << ", \"p90\": " << p90 << ", \"p99\": " << p99 << ", \"p999\": " << p999
     << ", \"isolated_nodes\": " << isolatedNodes
     << ", \"self_loops\": " << selfLoops
     << ", \"directed\": " << (directed ? "true" : "false")
     << ", \"graphs\": " << graphs << ", \"largest_graph\": " << largestGraph
     << "}";
  return os.str();
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

template <typename T>
__global__ void validateEdges(const T *src, const T *dst, int64_t e, int64_t n,
                              unsigned long long *firstBad) {
  GRID_STRIDE(i, e) {
    T s = src[i], d = dst[i];
    if (s < 0 || s >= n || d < 0 || d >= n)
      atomicMin(firstBad, static_cast<unsigned long long>(i));
  }
}

template <typename T>
__global__ void validateBatch(const int64_t *batch, const T *src, const T *dst,
                              int64_t n, int64_t e,
                              unsigned long long *firstUnsorted,
                              unsigned long long *firstCrossing) {
  GRID_STRIDE(i, n) {
    if (batch[i] < 0 || (i > 0 && batch[i] < batch[i - 1]))
      atomicMin(firstUnsorted, static_cast<unsigned long long>(i));
  }
  GRID_STRIDE(i, e) {
    if (batch[src[i]] != batch[dst[i]])
      atomicMin(firstCrossing, static_cast<unsigned long long>(i));
  }
}

/// key = major << bits | minor, value = edge id; counts major degrees.
template <typename T, typename I>
__global__ void packKeys(const T *major, const T *minor, int64_t e, int bits,
                         unsigned long long *keys, I *values, int *degree) {
  GRID_STRIDE(i, e) {
    unsigned long long ma = static_cast<unsigned long long>(major[i]);
    keys[i] = (ma << bits) | static_cast<unsigned long long>(minor[i]);
    values[i] = static_cast<I>(i);
    atomicAdd(degree + ma, 1);
  }
}

template <typename I>
__global__ void unpackMinor(const unsigned long long *keys, int64_t e,
                            unsigned long long mask, I *minor) {
  GRID_STRIDE(i, e) { minor[i] = static_cast<I>(keys[i] & mask); }
}

template <typename I>
__global__ void widenDegrees(const int *degree, int64_t n, I *out) {
  GRID_STRIDE(i, n + 1) { out[i] = i < n ? static_cast<I>(degree[i]) : I(0); }
}

template <typename I>
__global__ void invert(const I *perm, int64_t e, I *inverse) {
  GRID_STRIDE(i, e) { inverse[perm[i]] = static_cast<I>(i); }
}

template <typename I>
__global__ void compose(const I *cscEdge, const I *inverseCsr, int64_t e,
                        I *cscToCsr) {
  GRID_STRIDE(i, e) { cscToCsr[i] = inverseCsr[cscEdge[i]]; }
}

/// Counters: [0] isolated nodes, [1] self-loops, [2] asymmetry (0 = none).
template <typename T, typename I>
__global__ void countStats(const int *inDeg, const int *outDeg, int64_t n,
                           const T *src, const T *dst, int64_t e,
                           const I *rowPtr, const I *colPtr, const I *csrCol,
                           const I *cscRow, unsigned long long *counters) {
  GRID_STRIDE(i, n) {
    if (inDeg[i] == 0 && outDeg[i] == 0)
      atomicAdd(counters + 0, 1ull);
  }
  GRID_STRIDE(i, e) {
    if (src[i] == dst[i])
      atomicAdd(counters + 1, 1ull);
    if (csrCol[i] != cscRow[i])
      counters[2] = 1;
  }
  GRID_STRIDE(i, n + 1) {
    if (rowPtr[i] != colPtr[i])
      counters[2] = 1;
  }
}

__global__ void pickRanks(const int *sorted, int64_t n, const int64_t *ranks,
                          int count, long long *out) {
  int i = threadIdx.x;
  if (i < count)
    out[i] = n ? sorted[ranks[i]] : 0;
}

__global__ void countPerGraph(const int64_t *batch, int64_t n, int *counts) {
  GRID_STRIDE(i, n) { atomicAdd(counts + batch[i], 1); }
}

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

/// The in-degrees sorted, kept for bucket thresholds.
struct SortedDegrees {
  DeviceBuffer values;
};

template <typename I> struct GraphBuilder {
  template <typename T>
  static Status run(Graph &g, const T *src, const T *dst, int64_t e, int64_t n,
                    const int64_t *batch, cudaStream_t stream,
                    const GraphBuildOptions &options);
};

} // namespace runtime
} // namespace gnn

namespace {
/// Allocations of one build, with the error of the first failure.
struct Arena {
  Status status;
  DeviceBuffer take(size_t bytes) {
    if (!status.ok())
      return DeviceBuffer();
    StatusOr<DeviceBuffer> b = DeviceBuffer::allocate(bytes);
    if (!b.ok()) {
      status = b.error();
      return DeviceBuffer();
    }
    return std::move(*b);
  }
};
} // namespace

/// Sorted keys of (major, minor) with the edge ids as values, the minor ids
/// unpacked, and the row pointer of `major`.
template <typename T, typename I>
static Status sortBy(const T *major, const T *minor, int64_t e, int64_t n,
                     int bits, cudaStream_t stream, Arena &arena,
                     DeviceBuffer &ptr, DeviceBuffer &minorOut,
                     DeviceBuffer &edgeOut, DeviceBuffer &degree) {
  DeviceBuffer keysIn = arena.take(e * 8), keysOut = arena.take(e * 8);
  DeviceBuffer valsIn = arena.take(e * sizeof(I));
  edgeOut = arena.take(e * sizeof(I));
  minorOut = arena.take(e * sizeof(I));
  ptr = arena.take((n + 1) * sizeof(I));
  degree = arena.take(n * sizeof(int));
  DeviceBuffer wide = arena.take((n + 1) * sizeof(I));
  GNN_RETURN_IF_ERROR(arena.status);
  if (n)
    GNN_CUDA(cudaMemsetAsync(degree.data(), 0, n * sizeof(int), stream));
  if (e)
    packKeys<T, I><<<blocksFor(e), kThreads, 0, stream>>>(
        major, minor, e, bits, keysIn.as<unsigned long long>(), valsIn.as<I>(),
        degree.as<int>());
  GNN_CUDA(cudaGetLastError());
  size_t tempBytes = 0;
  int endBit = std::min(64, 2 * bits);
  GNN_CUDA(cub::DeviceRadixSort::SortPairs(
      nullptr, tempBytes, keysIn.as<unsigned long long>(),
      keysOut.as<unsigned long long>(), valsIn.as<I>(), edgeOut.as<I>(), e, 0,
      endBit, stream));
  DeviceBuffer temp = arena.take(std::max<size_t>(tempBytes, 1));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cub::DeviceRadixSort::SortPairs(
      temp.data(), tempBytes, keysIn.as<unsigned long long>(),
      keysOut.as<unsigned long long>(), valsIn.as<I>(), edgeOut.as<I>(), e, 0,
      endBit, stream));
  if (e)
    unpackMinor<I><<<blocksFor(e), kThreads, 0, stream>>>(
        keysOut.as<unsigned long long>(), e, (1ull << bits) - 1,
        minorOut.as<I>());
  widenDegrees<I><<<blocksFor(n + 1), kThreads, 0, stream>>>(degree.as<int>(),
                                                             n, wide.as<I>());
  GNN_CUDA(cudaGetLastError());
  size_t scanBytes = 0;
  GNN_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, wide.as<I>(),
                                         ptr.as<I>(), n + 1, stream));
  DeviceBuffer scanTemp = arena.take(std::max<size_t>(scanBytes, 1));
  GNN_RETURN_IF_ERROR(arena.status);
  GNN_CUDA(cub::DeviceScan::ExclusiveSum(scanTemp.data(), scanBytes,
                                         wide.as<I>(), ptr.as<I>(), n + 1,
                                         stream));
  return Status();
}

template <typename I>
template <typename T>
Status GraphBuilder<I>::run(Graph &g, const T *src, const T *dst, int64_t e,
                            int64_t n, const int64_t *batch,
                            cudaStream_t stream,
                            const GraphBuildOptions &options) {
  Arena arena;
  // Validation: ids in range.
  DeviceBuffer flags = arena.take(3 * sizeof(unsigned long long));
  GNN_RETURN_IF_ERROR(arena.status);
  unsigned long long none[3] = {~0ull, ~0ull, ~0ull};
  GNN_CUDA(cudaMemcpyAsync(flags.data(), none, sizeof(none),
                           cudaMemcpyHostToDevice, stream));
  auto *bad = flags.as<unsigned long long>();
  if (e)
    validateEdges<T><<<blocksFor(e), kThreads, 0, stream>>>(src, dst, e, n, bad);
  GNN_CUDA(cudaGetLastError());
  unsigned long long found[3];
  GNN_CUDA(cudaMemcpyAsync(found, bad, sizeof(found), cudaMemcpyDeviceToHost,
                           stream));
  GNN_CUDA(cudaStreamSynchronize(stream));
  // The batch check reads batch[src[i]]: only once the ids are known valid.
  if (found[0] == ~0ull && batch && n) {
    validateBatch<T><<<blocksFor(std::max(n, e)), kThreads, 0, stream>>>(
        batch, src, dst, n, e, bad + 1, bad + 2);
    GNN_CUDA(cudaGetLastError());
    GNN_CUDA(cudaMemcpyAsync(found, bad, sizeof(found), cudaMemcpyDeviceToHost,
                             stream));
    GNN_CUDA(cudaStreamSynchronize(stream));
  }
  if (found[0] != ~0ull) {
    T s = 0, d = 0;
    GNN_CUDA(cudaMemcpy(&s, src + found[0], sizeof(T), cudaMemcpyDeviceToHost));
    GNN_CUDA(cudaMemcpy(&d, dst + found[0], sizeof(T), cudaMemcpyDeviceToHost));
    return Status::error("edge_index[:, " + std::to_string(found[0]) + "] = (" +
                         std::to_string(s) + ", " + std::to_string(d) +
                         ") has a node id outside [0, " + std::to_string(n) +
                         ")");
  }
  if (batch && found[1] != ~0ull) {
    int64_t here = 0, before = 0;
    GNN_CUDA(cudaMemcpy(&here, batch + found[1], 8, cudaMemcpyDeviceToHost));
    if (found[1] > 0)
      GNN_CUDA(cudaMemcpy(&before, batch + found[1] - 1, 8,
                          cudaMemcpyDeviceToHost));
    return Status::error("batch must be nonnegative and sorted, but batch[" +
                         std::to_string(found[1]) + "] = " +
                         std::to_string(here) +
                         (found[1] > 0 ? " follows " + std::to_string(before)
                                       : std::string()));
  }
  if (batch && found[2] != ~0ull)
    return Status::error("edge " + std::to_string(found[2]) +
                         " joins nodes of two different graphs of the batch");

  int bits = 1;
  while ((int64_t(1) << bits) < n)
    ++bits;
  DeviceBuffer csrDegree, cscDegree;
  GNN_RETURN_IF_ERROR(sortBy<T, I>(dst, src, e, n, bits, stream, arena,
                                   g.rowPtr, g.col, g.csrEdges, csrDegree));
  GNN_RETURN_IF_ERROR(sortBy<T, I>(src, dst, e, n, bits, stream, arena,
                                   g.colPtr, g.row, g.cscEdges, cscDegree));
  g.inDeg = std::move(csrDegree);
  g.outDeg = std::move(cscDegree);

  // The permutation between CSC and CSR slots.
  DeviceBuffer inverse = arena.take(e * sizeof(I));
  g.cscToCsrSlots = arena.take(e * sizeof(I));
  GNN_RETURN_IF_ERROR(arena.status);
  if (e) {
    invert<I><<<blocksFor(e), kThreads, 0, stream>>>(g.csrEdges.as<I>(), e,
                                                     inverse.as<I>());
    compose<I><<<blocksFor(e), kThreads, 0, stream>>>(
        g.cscEdges.as<I>(), inverse.as<I>(), e, g.cscToCsrSlots.as<I>());
  }
  GNN_CUDA(cudaGetLastError());

  GraphStatistics &st = g.stats;
  st.nodes = n;
  st.edges = e;
  st.meanDegree = n ? static_cast<double>(e) / n : 0.0;
  st.largestGraph = n;

  // Max out-degree (always) and the in-degree quantiles.
  DeviceBuffer maxOut = arena.take(sizeof(int));
  GNN_RETURN_IF_ERROR(arena.status);
  int maxOutHost = 0;
  if (n) {
    size_t bytes = 0;
    GNN_CUDA(cub::DeviceReduce::Max(nullptr, bytes, g.outDeg.as<int>(),
                                    maxOut.as<int>(), n, stream));
    DeviceBuffer temp = arena.take(std::max<size_t>(bytes, 1));
    GNN_RETURN_IF_ERROR(arena.status);
    GNN_CUDA(cub::DeviceReduce::Max(temp.data(), bytes, g.outDeg.as<int>(),
                                    maxOut.as<int>(), n, stream));
    GNN_CUDA(cudaMemcpyAsync(&maxOutHost, maxOut.data(), sizeof(int),
                             cudaMemcpyDeviceToHost, stream));
  }
  if (options.statistics && n) {
    DeviceBuffer sorted = arena.take(n * sizeof(int));
    size_t bytes = 0;
    GNN_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, g.inDeg.as<int>(),
                                            sorted.as<int>(), n, 0, 32, stream));
    DeviceBuffer temp = arena.take(std::max<size_t>(bytes, 1));
    DeviceBuffer ranks = arena.take(5 * 8), picked = arena.take(5 * 8);
    DeviceBuffer counters = arena.take(3 * 8);
    GNN_RETURN_IF_ERROR(arena.status);
    GNN_CUDA(cub::DeviceRadixSort::SortKeys(temp.data(), bytes,
                                            g.inDeg.as<int>(), sorted.as<int>(),
                                            n, 0, 32, stream));
    int64_t rankHost[5] = {rankOf(0.5, n), rankOf(0.9, n), rankOf(0.99, n),
                           rankOf(0.999, n), n - 1};
    GNN_CUDA(cudaMemcpyAsync(ranks.data(), rankHost, sizeof(rankHost),
                             cudaMemcpyHostToDevice, stream));
    pickRanks<<<1, 32, 0, stream>>>(sorted.as<int>(), n, ranks.as<int64_t>(),
                                    5, picked.as<long long>());
    GNN_CUDA(cudaMemsetAsync(counters.data(), 0, 3 * 8, stream));
    countStats<T, I><<<blocksFor(std::max(n + 1, e)), kThreads, 0, stream>>>(
        g.inDeg.as<int>(), g.outDeg.as<int>(), n, src, dst, e,
        g.rowPtr.as<I>(), g.colPtr.as<I>(), g.col.as<I>(), g.row.as<I>(),
        counters.as<unsigned long long>());
    GNN_CUDA(cudaGetLastError());
    long long q[5];
    unsigned long long c[3];
    GNN_CUDA(cudaMemcpyAsync(q, picked.data(), sizeof(q),
                             cudaMemcpyDeviceToHost, stream));
    GNN_CUDA(cudaMemcpyAsync(c, counters.data(), sizeof(c),
                             cudaMemcpyDeviceToHost, stream));
    GNN_CUDA(cudaStreamSynchronize(stream));
    st.p50 = q[0];
    st.p90 = q[1];
    st.p99 = q[2];
    st.p999 = q[3];
    st.maxInDegree = q[4];
    st.isolatedNodes = static_cast<int64_t>(c[0]);
    st.selfLoops = static_cast<int64_t>(c[1]);
    st.directed = c[2] != 0;
  }
  if (batch && n) {
    int64_t last = 0;
    GNN_CUDA(cudaMemcpy(&last, batch + n - 1, 8, cudaMemcpyDeviceToHost));
    st.graphs = last + 1;
    DeviceBuffer counts = arena.take(st.graphs * sizeof(int));
    DeviceBuffer largest = arena.take(sizeof(int));
    GNN_RETURN_IF_ERROR(arena.status);
    GNN_CUDA(cudaMemsetAsync(counts.data(), 0, st.graphs * sizeof(int), stream));
    countPerGraph<<<blocksFor(n), kThreads, 0, stream>>>(batch, n,
                                                         counts.as<int>());
    size_t bytes = 0;
    GNN_CUDA(cub::DeviceReduce::Max(nullptr, bytes, counts.as<int>(),
                                    largest.as<int>(), st.graphs, stream));
    DeviceBuffer temp = arena.take(std::max<size_t>(bytes, 1));
    GNN_RETURN_IF_ERROR(arena.status);
    GNN_CUDA(cub::DeviceReduce::Max(temp.data(), bytes, counts.as<int>(),
                                    largest.as<int>(), st.graphs, stream));
    int largestHost = 0;
    GNN_CUDA(cudaMemcpyAsync(&largestHost, largest.data(), sizeof(int),
                             cudaMemcpyDeviceToHost, stream));
    GNN_CUDA(cudaStreamSynchronize(stream));
    st.largestGraph = largestHost;
  }
  GNN_CUDA(cudaStreamSynchronize(stream));
  st.maxOutDegree = maxOutHost;
  return Status();
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

StatusOr<std::unique_ptr<Graph>> Graph::fromHost(const gnn::HostGraph &host,
                                                 cudaStream_t stream,
                                                 GraphBuildOptions options) {
  std::string invalid = host.validate();
  if (!invalid.empty())
    return Status::error(invalid);
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
  return build(src->data(), dst->data(), e, n, IndexType::Int64,
               batch.as<int64_t>(), stream, options);
}

StatusOr<DegreeBuckets> Graph::buckets(double quantile,
                                       cudaStream_t stream) const {
  if (!(quantile >= 0 && quantile <= 1))
    return Status::error("expected a quantile in [0, 1] but got " +
                         std::to_string(quantile));
  int64_t n = stats.nodes;
  DegreeBuckets out;
  Arena arena;
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
