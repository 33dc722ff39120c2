//===- Timing.h - summarising repeated timings -------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_TIMING_H
#define GNN_RUNTIME_TIMING_H

#include <algorithm>
#include <vector>

namespace gnn {
namespace runtime {

/// The median of repeated timings (the upper middle one of an even count;
/// 0 without any): what gnn-run, the autotuner and the benchmarks report.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_TIMING_H
