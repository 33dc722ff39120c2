//===- EdgeHash.h - A 64-bit hash of a directed edge ------------*- C++ -*-===//
//
// The hash whose order-independent sums over a graph's edges and over their
// reverses decide GraphStats::directed: equal sums, every edge has its
// reverse with the same multiplicity (up to hash collisions). One
// definition for the host statistics (HostGraph.cpp) and the device build
// (Runtime/Graph.cu), which must agree field for field.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_GRAPH_EDGEHASH_H
#define GNN_GRAPH_EDGEHASH_H

#include <cstdint>

#ifdef __CUDACC__
#define GNN_HOST_DEVICE __host__ __device__
#else
#define GNN_HOST_DEVICE
#endif

namespace gnn {

/// A 64-bit mix of an edge (splitmix64's finaliser over both ends).
GNN_HOST_DEVICE inline uint64_t edgeHash(int64_t from, int64_t to) {
  uint64_t z = static_cast<uint64_t>(from) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(to) + 0x632BE59BD9B4E019ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace gnn

#undef GNN_HOST_DEVICE

#endif // GNN_GRAPH_EDGEHASH_H
