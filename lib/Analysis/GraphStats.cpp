//===- GraphStats.cpp - the graph statistics the compiler reads -----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/GraphStats.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

using namespace gnn;

int GraphStats::bucketOf(int64_t degree) {
  int k = 0;
  while (k + 1 < kDegreeBuckets && (int64_t(1) << k) < degree)
    ++k;
  return k;
}

bool GraphStats::hasHistogram() const {
  for (int64_t r : rowsByDegree)
    if (r)
      return true;
  return false;
}

/// Sums `counts` over the buckets above `degree`: bucket k holds degrees up
/// to 2^k, so for a power of two `degree` = 2^j the buckets above j hold
/// exactly the degrees above it.
static int64_t sumAbove(const std::array<int64_t, GraphStats::kDegreeBuckets> &counts,
                        int64_t degree) {
  int64_t total = 0;
  for (int k = GraphStats::bucketOf(degree) + 1; k < GraphStats::kDegreeBuckets; ++k)
    total += counts[k];
  return total;
}

int64_t GraphStats::rowsAbove(int64_t degree) const {
  if (hasHistogram())
    return sumAbove(rowsByDegree, degree);
  return maxInDegree > degree ? 1 : 0;
}

int64_t GraphStats::edgesAbove(int64_t degree) const {
  if (hasHistogram())
    return sumAbove(edgesByDegree, degree);
  return maxInDegree > degree ? maxInDegree : 0;
}

std::string GraphStats::check() const {
  if (nodes < 0 || edges < 0)
    return "nodes and edges must be nonnegative";
  if (maxInDegree < 0 || maxOutDegree < 0 || maxInDegree > edges ||
      maxOutDegree > edges)
    return "the largest degrees must lie in [0, edges]";
  if (!(p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= maxInDegree) ||
      p50 < 0)
    return "the in-degree quantiles must be nondecreasing up to the largest "
           "in-degree";
  if (graphs < 0 || smallestGraph < 0 || smallestGraph > largestGraph ||
      largestGraph > nodes)
    return "graph sizes must satisfy 0 <= smallest <= largest <= nodes";
  if (hasHistogram()) {
    int64_t rows = 0, inEdges = 0;
    for (int k = 0; k < kDegreeBuckets; ++k) {
      if (rowsByDegree[k] < 0 || edgesByDegree[k] < 0)
        return "histogram counts must be nonnegative";
      rows += rowsByDegree[k];
      inEdges += edgesByDegree[k];
    }
    if (rows != nodes || inEdges != edges)
      return "the degree histogram holds " + std::to_string(rows) +
             " rows and " + std::to_string(inEdges) + " edges, expected " +
             std::to_string(nodes) + " and " + std::to_string(edges);
  }
  return "";
}

std::string GraphStats::toJson() const {
  std::ostringstream os;
  auto list = [&](const std::array<int64_t, kDegreeBuckets> &counts) {
    int last = kDegreeBuckets;
    while (last > 0 && !counts[last - 1])
      --last;
    os << "[";
    for (int k = 0; k < last; ++k)
      os << (k ? ", " : "") << counts[k];
    os << "]";
  };
  os << "{\"nodes\": " << nodes << ", \"edges\": " << edges
     << ", \"mean_degree\": " << meanDegree()
     << ", \"max_in_degree\": " << maxInDegree
     << ", \"max_out_degree\": " << maxOutDegree << ", \"p50\": " << p50
     << ", \"p90\": " << p90 << ", \"p99\": " << p99 << ", \"p999\": " << p999
     << ", \"rows_by_degree_log2\": ";
  list(rowsByDegree);
  os << ", \"edges_by_degree_log2\": ";
  list(edgesByDegree);
  os << ", \"isolated_nodes\": " << isolatedNodes
     << ", \"self_loops\": " << selfLoops
     << ", \"directed\": " << (directed ? "true" : "false")
     << ", \"graphs\": " << graphs << ", \"smallest_graph\": " << smallestGraph
     << ", \"largest_graph\": " << largestGraph
     << ", \"csr_order\": " << (csrOrder ? "true" : "false") << "}";
  return os.str();
}

namespace {
/// The scalar fields of the option form, by key.
struct Field {
  const char *key;
  int64_t GraphStats::*member;
};
const Field kFields[] = {
    {"nodes", &GraphStats::nodes},
    {"edges", &GraphStats::edges},
    {"max-in", &GraphStats::maxInDegree},
    {"max-out", &GraphStats::maxOutDegree},
    {"p50", &GraphStats::p50},
    {"p90", &GraphStats::p90},
    {"p99", &GraphStats::p99},
    {"p999", &GraphStats::p999},
    {"isolated", &GraphStats::isolatedNodes},
    {"self-loops", &GraphStats::selfLoops},
    {"graphs", &GraphStats::graphs},
    {"smallest-graph", &GraphStats::smallestGraph},
    {"largest-graph", &GraphStats::largestGraph},
};

bool parseInt(const std::string &text, int64_t &out) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || v < 0)
    return false;
  out = v;
  return true;
}
} // namespace

std::string GraphStats::toOption() const {
  GraphStats defaults;
  std::ostringstream os;
  const char *sep = "";
  // Nodes and edges always (parseOption fills sizes not named), the rest
  // where it differs from the default.
  for (const Field &f : kFields)
    if (f.member == &GraphStats::nodes || f.member == &GraphStats::edges ||
        this->*f.member != defaults.*f.member) {
      os << sep << f.key << ":" << this->*f.member;
      sep = ",";
    }
  if (directed) {
    os << sep << "directed:1";
    sep = ",";
  }
  if (csrOrder) {
    os << sep << "csr-order:1";
    sep = ",";
  }
  auto list = [&](const char *key,
                  const std::array<int64_t, kDegreeBuckets> &counts) {
    int last = kDegreeBuckets;
    while (last > 0 && !counts[last - 1])
      --last;
    if (!last)
      return;
    os << sep << key << ":";
    for (int k = 0; k < last; ++k)
      os << (k ? "/" : "") << counts[k];
    sep = ",";
  };
  list("rows-by-degree", rowsByDegree);
  list("edges-by-degree", edgesByDegree);
  return os.str();
}

std::string GraphStats::parseOption(const std::string &text, GraphStats &out) {
  GraphStats s;
  std::string meanDegree;
  std::set<std::string> named;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty())
      continue;
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      return "expected key:value, found '" + item + "'";
    std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    // (A graph's meta.txt refuses a repeated key too: which one was meant?)
    if (!named.insert(key).second)
      return "'" + key + "' is given twice";
    bool known = false;
    for (const Field &f : kFields)
      if (key == f.key) {
        known = true;
        if (!parseInt(value, s.*f.member))
          return "'" + key + "' expects a nonnegative integer, found '" +
                 value + "'";
      }
    if (known)
      continue;
    if (key == "directed" || key == "csr-order") {
      if (value != "0" && value != "1")
        return "'" + key + "' expects 0 or 1, found '" + value + "'";
      (key == "directed" ? s.directed : s.csrOrder) = value == "1";
    } else if (key == "mean-degree") {
      meanDegree = value;
    } else if (key == "rows-by-degree" || key == "edges-by-degree") {
      auto &counts = key == "rows-by-degree" ? s.rowsByDegree : s.edgesByDegree;
      std::stringstream parts(value);
      std::string part;
      int k = 0;
      while (std::getline(parts, part, '/')) {
        if (k == kDegreeBuckets)
          return "'" + key + "' has more than " +
                 std::to_string(kDegreeBuckets) + " buckets";
        if (!parseInt(part, counts[k++]))
          return "'" + key + "' expects '/'-separated nonnegative integers, "
                 "found '" + part + "'";
      }
    } else {
      return "unknown statistic '" + key + "'";
    }
  }
  // Sizes not given: 1000 nodes (or enough for the largest degree at the
  // given mean) of in-degree 16 (or the given mean).
  double d = 16;
  if (!meanDegree.empty()) {
    char *end = nullptr;
    d = std::strtod(meanDegree.c_str(), &end);
    if (*end || end == meanDegree.c_str() || std::isnan(d) || d < 0)
      return "'mean-degree' expects a nonnegative number, found '" +
             meanDegree + "'";
    // A finite mean the node count derived from it can be computed from.
    if (d > 1e12)
      return "'mean-degree' expects a finite number of at most 1e12, found '" +
             meanDegree + "'" + (std::isinf(d) ? " (not finite)" : "");
  }
  if (!s.nodes && !named.count("nodes"))
    s.nodes = std::max<int64_t>(
        1000, d > 0 ? static_cast<int64_t>(s.maxInDegree / d) + 1 : 0);
  if (!named.count("edges"))
    s.edges = std::max(s.maxInDegree, static_cast<int64_t>(d * s.nodes + 0.5));
  else if (!meanDegree.empty())
    return "give 'edges' or 'mean-degree', not both";
  // Graph sizes not given: one graph.
  if (!s.largestGraph)
    s.largestGraph = s.nodes;
  if (!s.smallestGraph)
    s.smallestGraph = s.largestGraph;
  if (std::string bad = s.check(); !bad.empty())
    return bad;
  out = s;
  return "";
}

int64_t GraphStats::smallGraphClass() const {
  if (nodes <= 0 || largestGraph <= 0 || largestGraph > kSmallGraphNodes)
    return 0;
  int64_t c = 8;
  while (c < largestGraph)
    c <<= 1;
  return c;
}
