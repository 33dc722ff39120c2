//===- Schedule.cpp - choosing a schedule for a kernel group --------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Schedule.h"

#include <algorithm>
#include <cmath>

using namespace gnn;

std::string ScheduleProblem::check() const {
  if (rowElements < 1)
    return "row of " + std::to_string(rowElements) + " elements";
  if (!(graph.meanDegree >= 0) || !std::isfinite(graph.meanDegree))
    return "mean degree must be a nonnegative number";
  return "";
}

static int64_t nextPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

Schedule gnn::chooseSchedule(const ScheduleProblem &p) {
  Schedule s;
  switch (p.kind) {
  case GroupKind::Spmm:
  case GroupKind::Reduce: {
    s.mapping = ThreadMapping::RowParallel;
    s.vector = p.rowElements % 4 == 0 ? 4 : p.rowElements % 2 == 0 ? 2 : 1;
    // Lanes over the features; where the row is narrower than a warp and
    // rows are long enough, the rest of the warp takes other edges of the
    // same row (the emitter derives the edge groups from lanes and width).
    s.lanes = std::min<int64_t>(32, nextPowerOfTwo((p.rowElements + s.vector - 1) / s.vector));
    if (p.graph.meanDegree >= 4)
      s.lanes = 32;
    // Long rows: one team per row would serialise a row of 10^3 to 10^5
    // edges; rows above 512 edges are spread over the GPU in chunks.
    if (p.graph.maxDegree > 1024)
      s.split = 512;
    break;
  }
  case GroupKind::EdgeSoftmax: {
    s.mapping = ThreadMapping::RowParallel;
    double d = p.graph.meanDegree;
    s.lanes = d >= 24 ? 32 : d >= 12 ? 16 : d >= 6 ? 8 : 4;
    break;
  }
  case GroupKind::Sddmm:
  case GroupKind::Gather:
    s.mapping = ThreadMapping::EdgeParallel;
    break;
  case GroupKind::Degree:
  case GroupKind::Elementwise:
    s.mapping = ThreadMapping::ElementParallel;
    break;
  }
  s.block = 256;
  return s;
}

std::string Schedule::verify(const ScheduleProblem &p) const {
  if (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)))
    return "lanes must be a power of two in [1, 32]";
  if (block < 32 || block > 1024 || block % 32 || block % lanes)
    return "block must be a multiple of 32 (and of lanes) in [32, 1024]";
  if (vector != 1 && vector != 2 && vector != 4)
    return "vector must be 1, 2 or 4";
  if (split < 0 || (split > 0 && split < 32))
    return "split must be 0 or at least 32";
  if (split && p.kind != GroupKind::Spmm && p.kind != GroupKind::Reduce)
    return "only aggregations can split heavy rows";
  if (p.rowElements % vector)
    return "vector width " + std::to_string(vector) +
           " does not divide the row of " + std::to_string(p.rowElements);
  bool rowKind = p.kind == GroupKind::Spmm || p.kind == GroupKind::Reduce ||
                 p.kind == GroupKind::EdgeSoftmax;
  if (rowKind != (mapping == ThreadMapping::RowParallel))
    return "aggregations and softmax need a row-parallel mapping, other "
           "groups another one";
  return "";
}
