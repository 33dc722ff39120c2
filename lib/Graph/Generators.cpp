//===- Generators.cpp - synthetic host graphs -----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace gnn;

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

/// `numEdges` edges into `numDst` nodes by a Zipf-like law of exponent
/// `alpha` (ranks mapped to ids through a seeded permutation, so hubs are
/// not all low ids), from sources drawn uniformly below `numSrc`.
static void zipfEdges(HostGraph &g, int64_t numSrc, int64_t numDst,
                      int64_t numEdges, uint64_t seed, double alpha) {
  if (numSrc <= 0 || numDst <= 0 || numEdges <= 0)
    return;
  SplitMix64 rng(seed);
  std::vector<double> cdf(numDst);
  double total = 0;
  for (int64_t i = 0; i < numDst; ++i)
    cdf[i] = (total += std::pow(static_cast<double>(i + 1), -alpha));
  std::vector<int64_t> perm(numDst);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = numDst - 1; i > 0; --i)
    std::swap(perm[i], perm[rng.below(i + 1)]);
  g.src.resize(numEdges);
  g.dst.resize(numEdges);
  for (int64_t e = 0; e < numEdges; ++e) {
    double u = rng.uniform() * total;
    int64_t rank = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    g.dst[e] = perm[std::min(rank, numDst - 1)];
    g.src[e] = static_cast<int64_t>(rng.below(numSrc));
  }
}

HostGraph gnn::generatePowerLaw(int64_t numNodes, int64_t numEdges,
                                uint64_t seed, double alpha) {
  HostGraph g;
  g.numNodes = numNodes;
  zipfEdges(g, numNodes, numNodes, numEdges, seed, alpha);
  return g;
}

HostGraph gnn::generateBipartite(int64_t numSrc, int64_t numDst,
                                 int64_t numEdges, uint64_t seed,
                                 double alpha) {
  HostGraph g;
  g.numSrc = numSrc;
  g.numDst = numDst;
  g.numNodes = std::max(numSrc, numDst);
  zipfEdges(g, numSrc, numDst, numEdges, seed, alpha);
  return g;
}

HostGraph gnn::generateBatch(int64_t numGraphs, int64_t minNodes,
                             int64_t maxNodes, double meanDegree,
                             uint64_t seed) {
  HostGraph g;
  SplitMix64 rng(seed);
  for (int64_t k = 0; k < numGraphs; ++k) {
    int64_t n = minNodes + static_cast<int64_t>(rng.below(maxNodes - minNodes + 1));
    int64_t base = g.numNodes;
    auto addUndirected = [&](int64_t a, int64_t b) {
      g.src.push_back(base + a);
      g.dst.push_back(base + b);
      g.src.push_back(base + b);
      g.dst.push_back(base + a);
    };
    for (int64_t i = 1; i < n; ++i)
      addUndirected(static_cast<int64_t>(rng.below(i)), i);
    int64_t extra = static_cast<int64_t>(std::llround(meanDegree * n / 2.0)) - (n - 1);
    for (int64_t i = 0; i < extra && n > 1; ++i) {
      int64_t a = static_cast<int64_t>(rng.below(n));
      int64_t b = static_cast<int64_t>(rng.below(n - 1));
      addUndirected(a, b >= a ? b + 1 : b);
    }
    g.graphIds.insert(g.graphIds.end(), n, k);
    g.numNodes += n;
  }
  return g;
}
