//===- NodeOrder.cpp - node orders for locality ---------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"

#include <algorithm>
#include <numeric>

using namespace gnn;

//===----------------------------------------------------------------------===//
// Node orders for locality
//===----------------------------------------------------------------------===//

std::optional<NodeOrder> gnn::parseNodeOrder(std::string_view name) {
  if (name == "rcm")
    return NodeOrder::ReverseCuthillMcKee;
  if (name == "degree")
    return NodeOrder::Degree;
  return std::nullopt;
}

const char *gnn::nodeOrderNames() { return "'rcm', 'degree'"; }

/// The nodes sorted by `key` ascending, ties by id.
static std::vector<int64_t> byKey(const std::vector<int64_t> &key) {
  std::vector<int64_t> ids(key.size());
  std::iota(ids.begin(), ids.end(), int64_t(0));
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int64_t a, int64_t b) { return key[a] < key[b]; });
  return ids;
}

std::vector<int64_t> gnn::localityOrder(int64_t numNodes, const int64_t *src,
                                        const int64_t *dst, int64_t numEdges,
                                        NodeOrder method) {
  size_t n = static_cast<size_t>(numNodes);
  if (method == NodeOrder::Degree) {
    std::vector<int64_t> negDegree(n, 0);
    for (int64_t e = 0; e < numEdges; ++e) {
      --negDegree[src[e]];
      --negDegree[dst[e]];
    }
    return byKey(negDegree);
  }
  // The symmetrised simple graph as CSR rows, each sorted and deduplicated.
  std::vector<int64_t> ptr(n + 1, 0);
  for (int64_t e = 0; e < numEdges; ++e)
    if (src[e] != dst[e]) {
      ++ptr[src[e] + 1];
      ++ptr[dst[e] + 1];
    }
  for (size_t v = 0; v < n; ++v)
    ptr[v + 1] += ptr[v];
  std::vector<int64_t> nbr(ptr[n]);
  std::vector<int64_t> fill(ptr.begin(), ptr.end() - 1);
  for (int64_t e = 0; e < numEdges; ++e)
    if (src[e] != dst[e]) {
      nbr[fill[src[e]]++] = dst[e];
      nbr[fill[dst[e]]++] = src[e];
    }
  std::vector<int64_t> degree(n);
  for (size_t v = 0; v < n; ++v) {
    auto first = nbr.begin() + ptr[v], last = nbr.begin() + ptr[v + 1];
    std::sort(first, last);
    degree[v] = std::unique(first, last) - first;
  }
  // Cuthill-McKee: the sequence is its own breadth-first queue.
  std::vector<char> seen(n, 0);
  std::vector<int64_t> order;
  order.reserve(n);
  std::vector<int64_t> fresh;
  auto byDegree = [&](int64_t a, int64_t b) {
    return degree[a] != degree[b] ? degree[a] < degree[b] : a < b;
  };
  for (int64_t start : byKey(degree)) {
    if (seen[start])
      continue;
    seen[start] = 1;
    size_t head = order.size();
    order.push_back(start);
    while (head < order.size()) {
      int64_t v = order[head++];
      fresh.clear();
      for (int64_t p = ptr[v], end = ptr[v] + degree[v]; p < end; ++p)
        if (!seen[nbr[p]]) {
          seen[nbr[p]] = 1;
          fresh.push_back(nbr[p]);
        }
      std::sort(fresh.begin(), fresh.end(), byDegree);
      order.insert(order.end(), fresh.begin(), fresh.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

HostGraph gnn::renumberNodes(const HostGraph &graph,
                             const std::vector<int64_t> &order) {
  std::vector<int64_t> rank(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    rank[order[i]] = static_cast<int64_t>(i);
  HostGraph out;
  out.name = graph.name;
  out.numNodes = graph.numNodes;
  out.edgeTypes = graph.edgeTypes;
  out.typedEmpty = graph.typedEmpty;
  out.src.resize(graph.src.size());
  out.dst.resize(graph.dst.size());
  for (size_t e = 0; e < graph.src.size(); ++e) {
    out.src[e] = rank[graph.src[e]];
    out.dst[e] = rank[graph.dst[e]];
  }
  return out;
}
