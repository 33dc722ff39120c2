//===- Graph.h - graphs on the GPU --------------------------------*- C++ -*-===//
//
// Part of gnnc. No MLIR.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A graph built on the GPU from a COO `edge_index` (row 0: sources, row 1:
/// destinations, as PyG uses it), int32 or int64:
///  - CSR by destination: `csrRowPtr` (N+1), `csrCol` (source of each slot),
///    `csrEdge` (original edge id of each slot), `csrDst` (its destination); rows list their sources in
///    increasing order, duplicates in edge-list order;
///  - CSC by source: `cscColPtr`, `cscRow` (destination), `cscEdge`;
///  - `cscToCsr`: the CSR slot of each CSC slot (the edge permutation);
///  - in- and out-degrees (int32 per node);
///  - `csrRowsByDegree` and `cscColsByDegree`: the node ids in increasing in-
///    (out-) degree, ties by id;
///  - statistics and light/heavy degree buckets.
/// Index arrays are 32-bit when N and E fit, 64-bit otherwise (`indexBits`).
/// Every input is validated on the GPU; errors name the offending entry.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_GRAPH_H
#define GNN_RUNTIME_GRAPH_H

#include "gnn/Analysis/GraphStats.h"
#include "gnn/Runtime/Program.h"
#include "gnn/Runtime/Status.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

namespace gnn {
struct HostGraph;
namespace runtime {

/// Element type of an index array.
enum class IndexType { Int32, Int64 };

/// An owned device allocation (the device's stream-ordered pool).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// `bytes` in the order of `stream`, the stream that first uses them (a
  /// block another stream freed is handed out only once that free is
  /// ordered before `stream`'s use). Freed in the order of the legacy
  /// default stream, where PyTorch's calls run unless a caller picks
  /// another stream.
  static StatusOr<DeviceBuffer> allocate(size_t bytes,
                                         cudaStream_t stream = nullptr);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&o) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *data() const { return ptr; }
  size_t size() const { return bytes; }
  template <typename T> T *as() const { return static_cast<T *>(ptr); }

  /// Copies `bytes` from host to this buffer / from this buffer to host.
  Status upload(const void *host, size_t count);
  Status download(void *host, size_t count) const;

private:
  void *ptr = nullptr;
  size_t bytes = 0;
};

/// Device memory as the runtime sees it.
struct DeviceMemoryInfo {
  /// Free for new allocations: the driver's free memory (cuMemGetInfo) plus
  /// what the runtime's memory pool holds without using it.
  int64_t freeBytes = 0;
  /// The device's memory.
  int64_t totalBytes = 0;
};

/// The device's free and total memory (sets the device up if needed).
StatusOr<DeviceMemoryInfo> deviceMemoryInfo();

/// Nodes split by in-degree: heavy rows have in-degree > threshold.
struct DegreeBuckets {
  int64_t threshold = 0;
  int64_t numHeavy = 0, numLight = 0;
  /// Node ids (index type of the graph), in increasing order.
  DeviceBuffer heavyRows, lightRows;
};

/// Options of Graph::build.
struct GraphBuildOptions {
  /// Compute quantiles, directedness, isolated nodes (a few extra passes).
  bool statistics = true;
  /// Force 64-bit indices even where 32 bits fit (tests).
  bool force64 = false;
  /// The caller knows the edges to be sorted by destination (a CSR
  /// adjacency's, a sampled batch's): the CSR is the edge list itself, no
  /// sort. Checked on the device with the other results; where it is
  /// wrong the graph is built again with the sort (the same graph).
  bool dstSorted = false;
  /// A bipartite graph's sides (`numSrc`, `numDst` <= the node count, -1:
  /// the node count): every source id is checked against numSrc and every
  /// target id against numDst, with the other ids, in the build's one
  /// synchronisation.
  int64_t numSrc = -1, numDst = -1;
};

class Graph {
public:
  /// Builds from device arrays `src`, `dst` of `numEdges` entries of
  /// `inputType`, for `numNodes` nodes; `batch` (optional, device, int64, one
  /// graph id per node, nondecreasing) describes a batch of small graphs.
  /// Runs on `stream` and synchronises it.
  static StatusOr<std::unique_ptr<Graph>>
  build(const void *src, const void *dst, int64_t numEdges, int64_t numNodes,
        IndexType inputType, const int64_t *batch = nullptr,
        cudaStream_t stream = nullptr, GraphBuildOptions options = {});

  /// Makes the graph typed: `types` (device, `numEdges()` entries of
  /// `typesType`, in edge-list order) are the edges' relation ids, kept in
  /// CSR slot order (`csr_type`, the graph's index width). Ids are checked
  /// (nonnegative, and within the index width) and their maximum read back:
  /// one synchronisation of `stream`.
  Status setEdgeTypes(const void *types, IndexType typesType,
                      cudaStream_t stream = nullptr);
  /// Whether the graph has edge types (setEdgeTypes), and 1 + its largest
  /// relation id (0 without edges).
  bool typed() const { return hasTypes; }
  int64_t numRelations() const { return relationCount; }
  /// The relation id of each CSR slot (null on an untyped graph).
  const void *csrType() const { return hasTypes ? csrTypes.data() : nullptr; }

  /// Uploads a host graph and builds it (tests, tools); a typed host
  /// graph's types too.
  static StatusOr<std::unique_ptr<Graph>>
  fromHost(const HostGraph &graph, cudaStream_t stream = nullptr,
           GraphBuildOptions options = {});

  int64_t numNodes() const { return stats.nodes; }
  int64_t numEdges() const { return stats.edges; }
  /// A bipartite graph's sides (GraphBuildOptions::numSrc, numDst): its
  /// programs' `src_nodes` and `dst_nodes`. Both numNodes() on a graph of
  /// one node set.
  int64_t numSrc() const { return srcNodes; }
  int64_t numDst() const { return dstNodes; }
  IndexType indexType() const { return index; }
  int indexBits() const { return index == IndexType::Int32 ? 32 : 64; }
  const GraphStats &statistics() const { return stats; }

  const void *csrRowPtr() const { return rowPtr.data(); }
  const void *csrCol() const { return col.data(); }
  const void *csrEdge() const { return csrEdges.data(); }
  /// The destination of each CSR slot (the row it belongs to).
  const void *csrDst() const { return csrDsts.data(); }
  const void *cscColPtr() const { return colPtr.data(); }
  const void *cscRow() const { return row.data(); }
  const void *cscEdge() const { return cscEdges.data(); }
  const void *cscToCsr() const { return cscToCsrSlots.data(); }
  const int32_t *inDegree() const { return inDeg.as<int32_t>(); }
  const int32_t *outDegree() const { return outDeg.as<int32_t>(); }
  /// Node ids in increasing in-degree (CSR rows) and out-degree (CSC
  /// columns), ties by id.
  const void *csrRowsByDegree() const { return rowsByDegree.data(); }
  /// The first node of each graph, then the node count (graphs + 1
  /// entries): the batch's graphs, or else the finest split of the ids into
  /// ranges no edge crosses (HostGraph's graphOffsets).
  const void *graphOffsets() const { return graphPtr.data(); }
  const void *cscColsByDegree() const { return colsByDegree.data(); }

  /// Splits nodes by in-degree at the `quantile` of the in-degrees (e.g.
  /// 0.99: rows above p99 are heavy).
  StatusOr<DegreeBuckets> buckets(double quantile,
                                  cudaStream_t stream = nullptr) const;

  /// Bytes of device memory the graph's arrays hold (formats and degrees;
  /// not the library steps' caches).
  size_t deviceBytes() const {
    return rowPtr.size() + col.size() + csrEdges.size() + csrDsts.size() +
           colPtr.size() + row.size() + cscEdges.size() + cscToCsrSlots.size() +
           inDeg.size() + outDeg.size() + rowsByDegree.size() +
           colsByDegree.size() + graphPtr.size() + csrTypes.size();
  }
  /// State that library steps cache per graph (cuSPARSE descriptors,
  /// workspaces); owned and destroyed with the graph.
  std::shared_ptr<void> &libraryState() const { return library; }

  /// Copies an index array to the host as int64 (tests).
  StatusOr<std::vector<int64_t>> download(const void *array,
                                          int64_t count) const;

  /// Records that work just queued on `stream` reads the graph. The graph's
  /// memory is freed in the order of the legacy default stream, which does
  /// not wait for non-blocking streams: for any other stream the graph
  /// records an event there (one per stream, re-recorded by each call), and
  /// its destructor makes the default stream wait for them, so that a block
  /// is handed out again only after the work that reads it. Nothing for the
  /// default stream itself.
  Status usedOn(cudaStream_t stream) const;
  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

private:
  Graph() = default;
  IndexType index = IndexType::Int32;
  GraphStats stats;
  int64_t srcNodes = 0, dstNodes = 0;
  DeviceBuffer rowPtr, col, csrEdges, csrDsts, colPtr, row, cscEdges, cscToCsrSlots;
  DeviceBuffer inDeg, outDeg, rowsByDegree, colsByDegree, graphPtr;
  DeviceBuffer csrTypes;
  bool hasTypes = false;
  int64_t relationCount = 0;
  mutable std::shared_ptr<void> library;
  /// Streams other than the default one that read the graph, with the
  /// event of their last use (usedOn).
  mutable std::mutex usesMutex;
  mutable std::vector<std::pair<cudaStream_t, cudaEvent_t>> uses;
  template <typename I> friend struct GraphBuilder;
};

/// A word in pinned host memory that kernels write (mapped: the same
/// address on the device) and the host reads without synchronising: the
/// verdict of a change check (compareAsync) that the caller looks at on a
/// later call. Words come from pinned slabs kept for the process's life and
/// are reused (after a quarantine of later releases): creating and dropping
/// a flag neither allocates nor frees pinned memory (cudaFreeHost would
/// wait for the device).
class HostFlag {
public:
  static StatusOr<std::unique_ptr<HostFlag>> create();
  ~HostFlag();
  HostFlag(const HostFlag &) = delete;
  HostFlag &operator=(const HostFlag &) = delete;
  /// The word's address (host and device: unified addressing).
  unsigned *word() const { return value; }
  /// What the kernels have written so far (a volatile read).
  unsigned read() const { return *static_cast<volatile unsigned *>(value); }

private:
  HostFlag() = default;
  unsigned *value = nullptr;
};

/// Enqueues on `stream` a comparison of `bytes` bytes at `a` and `b` (device
/// memory) that sets `*flag` to 1 where they differ (it never clears it).
Status compareAsync(const void *a, const void *b, size_t bytes, unsigned *flag,
                    cudaStream_t stream);

/// Whether work enqueued on `stream` now would be captured into a CUDA
/// graph (the stream, or with the global capture mode another one, is
/// being captured); an error asking counts as captured (the caller's
/// cautious path).
bool streamCapturing(cudaStream_t stream);

/// A float array a stale call's results are in, of element type `dtype`
/// (f32, f64, bf16 or f16).
struct PoisonTarget {
  void *data = nullptr;
  int64_t count = 0;
  DType dtype = DType::F32;
};

/// Enqueues on `stream` (one launch per 8 targets): where `*flag` is set,
/// every element of `targets` becomes NaN. A call whose graph was found
/// changed (compareAsync) returns NaN instead of values of the old graph.
Status poisonIfFlagged(const std::vector<PoisonTarget> &targets,
                       const unsigned *flag, cudaStream_t stream);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_GRAPH_H
