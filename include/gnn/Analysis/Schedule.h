//===- Schedule.h - choosing a schedule for a kernel group --------*- C++ -*-===//
//
// Part of gnnc. Plain C++, independent of the IR: the pass builds the problem
// from a kernel group and applies the answer as a #gnn.schedule attribute.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Default schedules per kind of kernel group, chosen from the graph's
/// statistics and the shapes:
///  - aggregations (spmm, reduce): row-parallel, a team of lanes per
///    destination row with the lanes over the row's features, vectorised
///    loads where the row width allows; the team is a whole warp when the
///    mean degree is 4 or more (lanes the row's width does not need take
///    other edges of the row: 2 edge groups for 64 floats in float4), else as
///    wide as the row needs;
///    rows of more than 512 edges (when the largest in-degree exceeds 1024)
///    are split into chunks handled by the whole GPU;
///  - attention (sddmm, score, edge softmax and spmm in one kernel):
///    row-parallel like an spmm over the output row, with a vector width that
///    also divides the per-head feature width (the score's dot products are
///    taken per head), and the same split of long rows;
///  - aggregation-family groups (a gather or sddmm chain fused into its
///    reduce or spmm) schedule like their reduce or spmm;
///  - edge softmax: row-parallel with the lanes over the row's edges; the team
///    grows with the mean degree (4 lanes for molecules, 32 for dense rows);
///  - sddmm, gather: edge-parallel, a thread per edge element;
///  - degree and elementwise groups: a thread per element.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_ANALYSIS_SCHEDULE_H
#define GNN_ANALYSIS_SCHEDULE_H

#include <cstdint>
#include <string>

namespace gnn {

/// What a kernel group computes, as far as scheduling cares.
enum class GroupKind {
  Spmm,
  Reduce,
  EdgeSoftmax,
  Sddmm,
  Gather,
  Degree,
  Elementwise,
  /// sddmm → score → edge softmax → spmm fused into one kernel.
  Attention
};

/// Graph statistics the choice depends on (the runtime Graph's, or pass
/// options).
struct GraphShape {
  double meanDegree = 16;
  int64_t maxDegree = 0;
};

/// What the schedule is chosen for.
struct ScheduleProblem {
  /// The widest row a schedule is chosen for: 2^40 elements, as wide as the
  /// verifier lets a tensor's static dimensions be, and far enough from
  /// 2^63 that products with lanes, vector widths and heads cannot wrap.
  static constexpr int64_t kMaxRowElements = int64_t(1) << 40;
  GroupKind kind = GroupKind::Elementwise;
  /// Elements of one output row (product of the trailing dimensions).
  int64_t rowElements = 1;
  /// Attention: elements of the last dimension of the spmm's input (the
  /// feature width D of one head); divides rowElements.
  int64_t innerElements = 1;
  GraphShape graph;
  /// Empty when the problem is well-formed, else what is wrong.
  std::string check() const;
};

/// Thread mapping of a schedule (mirrors #gnn.schedule's `mapping`).
enum class ThreadMapping { RowParallel, EdgeParallel, ElementParallel };

/// How a group is mapped onto the GPU (mirrors #gnn.schedule).
struct Schedule {
  ThreadMapping mapping = ThreadMapping::ElementParallel;
  int64_t lanes = 1, block = 256, vector = 1;
  /// Aggregations and attention: rows with more edges than this are processed
  /// in chunks of `split` edges by separate kernels (0: no split).
  int64_t split = 0;
  /// Empty when the schedule is valid for `problem`, else what is wrong.
  std::string verify(const ScheduleProblem &problem) const;
};

/// The default schedule for `problem` (which must pass check()).
Schedule chooseSchedule(const ScheduleProblem &problem);

} // namespace gnn

#endif // GNN_ANALYSIS_SCHEDULE_H
