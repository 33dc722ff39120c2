//===- GraphStats.h - the graph statistics the compiler reads ----*- C++ -*-===//
//
// Part of gnnc. Plain C++ (no MLIR, no CUDA): the runtime fills it on the GPU
// when it builds a graph, the host graph library on the CPU; the compile
// driver passes it to schedule selection as one value.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a schedule may depend on: sizes, in-degree quantiles and a log2
/// histogram of in-degrees (how many rows, and how many of their edges, lie
/// above each power of two: the light/heavy split reads it), the batch
/// structure and whether edge tensors arrive in CSR order. One struct serves
/// `gnn-run`'s report, the compile driver, the Python package's cache keys
/// and the `stats` option of `gnn-select-schedules`, whose text form is
/// `toOption()` / `parseOption()`.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_ANALYSIS_GRAPHSTATS_H
#define GNN_ANALYSIS_GRAPHSTATS_H

#include <array>
#include <cstdint>
#include <string>

namespace gnn {

struct GraphStats {
  /// Buckets of the degree histogram: bucket 0 holds degrees 0 and 1, bucket
  /// k > 0 the degrees in (2^(k-1), 2^k]; the last bucket also holds every
  /// larger degree.
  static constexpr int kDegreeBuckets = 40;
  /// The bucket of `degree` (>= 0).
  static int bucketOf(int64_t degree);

  int64_t nodes = 0, edges = 0;
  int64_t maxInDegree = 0, maxOutDegree = 0;
  /// In-degree quantiles, nearest rank on the sorted in-degrees.
  int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  /// Rows (destinations) per in-degree bucket, and the edges into them.
  /// All zero when unknown (statistics given by hand); `hasHistogram`.
  std::array<int64_t, kDegreeBuckets> rowsByDegree{}, edgesByDegree{};
  int64_t isolatedNodes = 0; ///< no incoming and no outgoing edge
  int64_t selfLoops = 0;
  /// False when every edge u->v has a matching v->u (same multiplicity).
  bool directed = false;
  /// The graphs of the batch (a `batch` vector's, or else the finest ranges
  /// of node ids that no edge crosses: a PyG batch's molecules; see
  /// HostGraph's graphOffsets): their number and the nodes of the smallest
  /// and the largest. Block-per-graph kernels run a block per graph.
  int64_t graphs = 1, smallestGraph = 0, largestGraph = 0;
  /// Whether the edges as given are already in CSR order (sorted by
  /// destination, ties in input order): edge tensors then need no
  /// permutation into CSR slots.
  bool csrOrder = false;

  bool operator==(const GraphStats &o) const {
    return nodes == o.nodes && edges == o.edges &&
           maxInDegree == o.maxInDegree && maxOutDegree == o.maxOutDegree &&
           p50 == o.p50 && p90 == o.p90 && p99 == o.p99 && p999 == o.p999 &&
           rowsByDegree == o.rowsByDegree && edgesByDegree == o.edgesByDegree &&
           isolatedNodes == o.isolatedNodes && selfLoops == o.selfLoops &&
           directed == o.directed && graphs == o.graphs &&
           smallestGraph == o.smallestGraph &&
           largestGraph == o.largestGraph && csrOrder == o.csrOrder;
  }
  bool operator!=(const GraphStats &o) const { return !(*this == o); }

  double meanDegree() const {
    return nodes ? static_cast<double>(edges) / nodes : 0.0;
  }
  /// The most nodes of a graph that counts as small.
  static constexpr int64_t kSmallGraphNodes = 128;
  /// The size class of a batch of small graphs (molecules): the largest
  /// graph's node count rounded up to a power of two, at least 8, so that
  /// batches of similar graphs share it; 0 when the largest graph has more
  /// than kSmallGraphNodes nodes or there are no nodes. Kernels that keep a
  /// whole graph on chip (a block per graph) are compiled for a class.
  int64_t smallGraphClass() const;
  bool hasHistogram() const;
  /// Rows with in-degree above `degree`, and their edges. Exact when
  /// `degree` is 0, 1 or a power of two and the histogram is known; without
  /// a histogram, 1 row of `maxInDegree` edges when `degree < maxInDegree`,
  /// else 0.
  int64_t rowsAbove(int64_t degree) const;
  int64_t edgesAbove(int64_t degree) const;

  /// Empty when the statistics are consistent, else what is wrong.
  std::string check() const;
  std::string toJson() const;
  /// `key:value` pairs joined by commas (no spaces: one pass option value),
  /// the histograms as `/`-separated counts with trailing zeros dropped.
  /// Fields at their defaults are left out, except nodes and edges.
  std::string toOption() const;
  /// Parses `toOption()`'s form into `out`; returns what is wrong, or an
  /// empty string. By hand, `mean-degree:D` may stand for `edges`; without
  /// `nodes` there are 1000 (or enough for `max-in` at that mean), without
  /// `edges` the mean degree is 16; other fields not named are 0 (one graph
  /// of all nodes).
  static std::string parseOption(const std::string &text, GraphStats &out);
};

} // namespace gnn

#endif // GNN_ANALYSIS_GRAPHSTATS_H
