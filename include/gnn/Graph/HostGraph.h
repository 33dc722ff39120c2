//===- HostGraph.h - a graph in host memory -----------------------*- C++ -*-===//
//
// Part of gnnc. No MLIR and no CUDA: used by the reference evaluator, the
// runtime and the tools alike.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A graph as an edge list in host memory, with loaders for the data-set
/// folder layout of `../shared/datasets`, for plain edge-list files and NumPy
/// `.npy` edge arrays, and seeded synthetic generators (power-law graphs,
/// batches of small graphs).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_GRAPH_HOSTGRAPH_H
#define GNN_GRAPH_HOSTGRAPH_H

#include "gnn/Analysis/GraphStats.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gnn {

/// A directed multigraph given by its edge list, in the order the edges were
/// read. Edge `e` goes from `src[e]` to `dst[e]`; self-loops and duplicates are
/// kept. A batch of small graphs also has `graphIds` (nondecreasing, one per
/// node). A bipartite graph (`numSrc`, `numDst` >= 0) has sources below
/// numSrc and destinations below numDst, and `numNodes` is the larger of
/// the two (what a tool that sees one node set pads to).
struct HostGraph {
  /// Human-readable origin (a folder, a file, a generator spec).
  std::string name;
  int64_t numNodes = 0;
  /// A bipartite graph's sides; -1 for a graph of one node set.
  int64_t numSrc = -1, numDst = -1;
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
  /// Graph id of each node for a batch of small graphs; empty otherwise.
  std::vector<int64_t> graphIds;
  /// A typed graph's relation id of each edge (nonnegative); empty for an
  /// untyped graph.
  std::vector<int64_t> edgeTypes;

  int64_t numEdges() const { return static_cast<int64_t>(src.size()); }
  bool bipartite() const { return numSrc >= 0; }
  /// The source (destination) nodes: numNodes on a graph of one node set.
  int64_t srcNodes() const { return numSrc >= 0 ? numSrc : numNodes; }
  int64_t dstNodes() const { return numDst >= 0 ? numDst : numNodes; }
  bool typed() const { return !edgeTypes.empty() || typedEmpty; }
  /// Set on a typed graph without edges (its type list is empty too).
  bool typedEmpty = false;
  /// 1 + the largest relation id (0 without edges or types).
  int64_t numRelations() const;
  int64_t numGraphs() const {
    return graphIds.empty() ? 1 : (graphIds.back() + 1);
  }

  /// Checks ids in range, matching lengths and sorted graph ids. Returns an
  /// empty string when valid, else a message naming the first problem.
  std::string validate() const;
};

/// Result of a load: the graph or an error message.
struct GraphOrError {
  HostGraph graph;
  std::string error;
  bool ok() const { return error.empty(); }
};

/// Bytes of host memory a graph of `nodes` and `edges` takes with what the
/// tools build from it: 48 per node (degree statistics, a CSR row pointer,
/// graph ids, a generator's weights and permutation) and 32 per edge (the
/// edge list and a CSR index); -1 when negative or beyond int64.
int64_t graphHostBytes(int64_t nodes, int64_t edges);

/// The host memory a graph and the reference's tensors may take: the
/// machine's physical memory.
int64_t hostMemoryBytes();

/// Caps hostMemoryBytes() at `bytes` in this process (0: no cap): for the
/// fuzzers, which run under a memory limit of their own.
void setHostMemoryCap(int64_t bytes);

/// Empty when a graph of `nodes` and `edges` fits in hostMemoryBytes(), else
/// a message naming the nodes, the edges and the bytes; `what` names the
/// graph (a file, a generator spec).
std::string checkGraphSize(const std::string &what, int64_t nodes,
                           int64_t edges);

/// Loads a graph from `spec`; a graph too large for this machine's memory
/// (see checkGraphSize) is refused before it is built:
///  - a data-set folder (`meta.txt` + `edges.txt.gz` or `edges.npy`
///    [+ `graph_ids.txt.gz`] [+ `edge_types.txt.gz`]): `meta.txt` holds
///    `nodes N` (and optionally `edges E`), and for a bipartite graph
///    `src_nodes S` and `dst_nodes D` (N the larger); `graph_ids.txt.gz` a
///    graph id per node (a batch of small graphs), `edge_types.txt.gz` a
///    relation id per edge (a typed graph; empty for one without edges);
///  - a text file of `src dst` lines (optionally gzip-compressed), where a line
///    `# nodes N` fixes the node count (else it is 1 + the largest id);
///  - a NumPy `.npy` edge array (known by its extension or its magic bytes):
///    little-endian int32 or int64 ids of shape `[E, 2]` (a `src, dst` row per
///    edge) or `[2, E]` (the sources, then the destinations, as PyG's
///    `edge_index`), in C or Fortran order; a `[2, 2]` array, which could be
///    either, is refused (write a graph of two edges as text). The node
///    count is 1 + the largest id (a data-set folder with
///    `edges.npy` takes it from `meta.txt` instead). The payload is read in
///    large blocks and must be exactly `E * 2 * itemsize` bytes;
///  - `powerlaw:nodes=N,edges=E[,seed=S][,alpha=A]`: a synthetic power-law
///    graph (see generatePowerLaw);
///  - `bipartite:src=S,dst=D,edges=E[,seed=S][,alpha=A]`: a synthetic
///    bipartite graph (see generateBipartite);
///  - `batch:graphs=G[,min=A,max=B][,degree=D][,seed=S]`: a batch of small
///    graphs (see generateBatch).
/// Each generator also takes `relations=R` (R >= 1): a typed graph whose
/// edges get relation ids uniform in [0, R) (see assignRelations).
/// A bare data-set name (e.g. `cora`) is looked up under `$GNNC_DATASETS`,
/// then `../shared/datasets` relative to the working directory and upward.
///
/// Nothing here throws or blocks on what the paths lead to: a path that
/// cannot be looked at (a symbolic-link loop, a folder that cannot be
/// searched) is an error `'PATH': REASON`, and every file is opened as a
/// ReadableFile (gnn/Tensor/Tensor.h), so a FIFO, a device or a folder is
/// refused by name. Text is decompressed as a stream and parsed as it comes,
/// bounded as it goes: at most 128 bytes per edge (or graph id) read so far
/// plus 16 MiB of comments and blank lines, lines of at most 1 MiB, at most
/// the edges meta.txt declares and that fit in memory, `meta.txt` at most
/// 1 MiB; so a gzip bomb is refused after reading a few MiB of it.
GraphOrError loadGraph(const std::string &spec);

/// Writes `graph`'s edges to `path` as text that loadGraph reads back as the
/// same graph: `# nodes N`, then a `src dst` line per edge in order. Returns
/// an empty string on success, else the error; a file that was not written
/// whole is removed. A graph with more than edges and a node count (see
/// edgeListOmissions) is refused: write it with writeDatasetDir.
std::string writeEdgeList(const std::string &path, const HostGraph &graph);

/// What of `graph` an edge list (text or `.npy`) cannot hold, for messages,
/// after "the graph's": "graph ids (a batch of 3 small graphs)", "bipartite
/// split (50 source and 20 destination nodes)", "relation ids (3
/// relations)", joined by " and "; empty when it has only edges and nodes.
std::string edgeListOmissions(const HostGraph &graph);

/// Writes `graph` whole to the data-set folder `dir` (created if missing), as
/// loadGraph reads it back as the same graph: `meta.txt` (`nodes`, `edges`,
/// and `src_nodes` / `dst_nodes` for a bipartite graph), `edges.txt.gz`
/// (the edges in order), `graph_ids.txt.gz` (a batch of small graphs) and
/// `edge_types.txt.gz` (a typed graph). The layout's files the graph has no
/// use for (`graph_ids.txt.gz`, `edge_types.txt.gz`, `edges.npy`) are removed
/// from `dir`, so that what an earlier dump left is not read back with it;
/// other files are left alone. Returns an empty string on success, else the
/// error.
std::string writeDatasetDir(const std::string &dir, const HostGraph &graph);

/// A power-law graph: `numEdges` edges whose destinations follow a Zipf-like
/// law of exponent `alpha` over the nodes (so a few nodes have huge
/// in-degrees) and whose sources are uniform; self-loops and duplicates are
/// possible, as in real data. Deterministic for a given seed.
HostGraph generatePowerLaw(int64_t numNodes, int64_t numEdges, uint64_t seed,
                           double alpha = 1.0);

/// A bipartite graph of `numSrc` source and `numDst` destination nodes:
/// `numEdges` edges whose destinations follow generatePowerLaw's law over
/// the destinations and whose sources are uniform.
HostGraph generateBipartite(int64_t numSrc, int64_t numDst, int64_t numEdges,
                            uint64_t seed, double alpha = 1.0);

/// Gives every edge of `graph` a relation id uniform in [0, numRelations),
/// drawn from `seed` (the graph becomes typed).
void assignRelations(HostGraph &graph, int64_t numRelations, uint64_t seed);

/// A batch of `numGraphs` small undirected graphs with between `minNodes` and
/// `maxNodes` nodes each: a random spanning tree plus extra random edges up to
/// a mean degree of about `meanDegree`, both directions stored.
HostGraph generateBatch(int64_t numGraphs, int64_t minNodes, int64_t maxNodes,
                        double meanDegree, uint64_t seed);

/// The first node of each graph, then the node count (graphs + 1 entries;
/// `{0}` for a graph without nodes): with graph ids, the nodes of each id (an
/// id without nodes is an empty graph); else the finest split of the node ids
/// into consecutive ranges that no edge crosses (position i, 0 < i < nodes,
/// starts a graph iff no edge (u, v) has min(u, v) < i <= max(u, v)). The
/// runtime builds the same array (`graph_ptr`) for block-per-graph kernels.
std::vector<int64_t> graphOffsets(const HostGraph &graph);

/// Renumberings of a graph's nodes for locality (docs/Python.md,
/// "Reordering a graph").
enum class NodeOrder {
  /// Reverse Cuthill-McKee on the symmetrised graph (self-loops and
  /// duplicate edges ignored): components in the order of their node of
  /// least (degree, id), which starts each; breadth first, a node's
  /// unvisited neighbours by (degree, id); the whole sequence reversed.
  ReverseCuthillMcKee,
  /// Highest degree (in + out, self-loops and duplicates counted) first,
  /// ties by id.
  Degree,
};

/// "rcm" or "degree"; nullopt for anything else.
std::optional<NodeOrder> parseNodeOrder(std::string_view name);

/// The names parseNodeOrder takes, for messages: "'rcm', 'degree'".
const char *nodeOrderNames();

/// The order of `method` for the `numEdges` edges `src[e] -> dst[e]` over
/// `numNodes` nodes (ids in range: the caller checks): `order[i]` is the old
/// id of new node `i`.
std::vector<int64_t> localityOrder(int64_t numNodes, const int64_t *src,
                                   const int64_t *dst, int64_t numEdges,
                                   NodeOrder method);

/// `graph` with node `order[i]` renamed `i`, its edges in their order.
/// Batches of small graphs (graph ids) are not renumbered: the caller
/// refuses them (their graphs must stay in id order).
HostGraph renumberNodes(const HostGraph &graph,
                        const std::vector<int64_t> &order);

/// The statistics of a graph (gnn/Analysis/GraphStats.h), computed on the
/// host: equal to what the runtime computes on the GPU when it builds the
/// graph (`directed` by order-independent hashes of the edges and of the
/// reversed edges, wrong with probability about 2^-64).
GraphStats computeStats(const HostGraph &graph);

/// A small deterministic random generator (splitmix64), shared so that every
/// tool draws the same values for the same seed.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  /// Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }

private:
  uint64_t state;
};

} // namespace gnn

#endif // GNN_GRAPH_HOSTGRAPH_H
