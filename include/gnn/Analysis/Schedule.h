//===- Schedule.h - choosing a schedule for a kernel group --------*- C++
//-*-===//
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
///    rows are split into a light part (a team per row) and a heavy part
///    (rows above `split` edges, cut into chunks of at least `split` edges
///    spread over the GPU and merged deterministically); see chooseSplit
///    below for when and where;
///  - attention (sddmm, score, edge softmax and spmm in one kernel):
///    row-parallel like an spmm over the output row, with a vector width that
///    also divides the per-head feature width (the score's dot products are
///    taken per head), and a split of long rows like aggregations' (its
///    edges cost more, so it splits from shorter rows on);
///  - aggregation-family groups (a gather or sddmm chain fused into its
///    reduce or spmm) schedule like their reduce or spmm;
///  - edge softmax: row-parallel with the lanes over the row's edges; the team
///    grows with the mean degree (4 lanes for molecules, 32 for dense rows);
///  - sddmm, gather: edge-parallel, a thread per edge element;
///  - degree and elementwise groups: a thread per element.
/// A schedule's thread mapping is its family's (gnn/Dialect/GNN/IR/
/// KernelFamily.h); families with their own rule (graph blocks) are
/// scheduled by their record, not here.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_ANALYSIS_SCHEDULE_H
#define GNN_ANALYSIS_SCHEDULE_H

#include "gnn/Analysis/GraphStats.h"

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

/// Whether groups of `kind` may split heavy rows (Schedule::split).
bool splitsRows(GroupKind kind);

/// The vectors of a dot product each lane of an sddmm's team takes.
inline constexpr int64_t kSddmmVectorsPerLane = 4;

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
  /// feature width D of one head); divides rowElements. Sddmm: the length
  /// of one result element's dot product (1 for the element-wise kinds).
  int64_t innerElements = 1;
  /// Bytes of one stored element of the rows read (4 for f32, 8 for f64, 2
  /// for bf16 and f16): a vector access moves at most 16 bytes, so 2-byte
  /// rows take vectors of 8.
  int64_t elementBytes = 4;
  /// An spmm or reduce max/min that also returns winner codes (a code per
  /// element beside the extremum: vectors of at most 4).
  bool trackWinner = false;
  /// The graph's statistics (the runtime Graph's, or the `stats` option).
  GraphStats graph = defaultStats();
  /// The statistics assumed when none are given: 1000 nodes of in-degree 16.
  static GraphStats defaultStats();
  /// Empty when the problem is well-formed, else what is wrong.
  std::string check() const;
};

/// The block of the row kinds' light-row kernels (aggregations, attention):
/// two warps.
inline constexpr int64_t kRowBlock = 64;

/// The parameters of a #gnn.schedule (its `mapping` is the family's).
struct Schedule {
  int64_t lanes = 1, block = 256, vector = 1;
  /// Aggregations and attention: rows with more edges than this are processed
  /// in chunks of `split` edges by separate kernels (0: no split).
  int64_t split = 0;
  /// Empty when the schedule is valid for `problem`, else what is wrong
  /// (a vector of 8 only for 2-byte elements).
  std::string verify(const ScheduleProblem &problem) const;
};

/// The default schedule for `problem` (which must pass check()).
Schedule chooseSchedule(const ScheduleProblem &problem);

/// The heavy-row threshold of a row kind (0: no split). Rows of up to
/// `t` edges take one team each in the light-row kernel, which runs beside
/// the heavy rows' chunked kernels (docs/Runtime.md). The rules, calibrated
/// on an H200 sweep of thresholds 32 to 512 with that overlap
/// (`bench/results/split-s55/`: pubmed, musae-github, blogcatalog,
/// arxiv-like and reddit-like, F = 128, f32 and bf16, forward and
/// forward+backward):
///  - no split while the largest in-degree is at most 256 (aggregations) or
///    128 (attention): the two extra launches cost more than the longest
///    row;
///  - attention whose largest in-degree is at most 1024 splits above 32
///    edges: its few long rows are short enough for chunks of 32;
///  - else rows longer than the mean degree (rounded up to a power of two)
///    and than 128 edges are heavy: the light kernel keeps the typical row
///    and the chunked kernels take the tail (arxiv-like, mean 13.8: 128;
///    reddit-like, mean 492: 512); no split when that leaves no row heavy.
int64_t chooseSplit(const ScheduleProblem &problem);

/// The static shared memory one block may have (the `gnnk.shared` arrays of
/// a kernel together).
inline constexpr int64_t kBlockSharedBytes = 48 * 1024;

/// What default schedules and kernel groups read from the statistics, as a
/// string `ROWS|SHAPE`: two graphs with equal keys get equal schedules and
/// kernel groups (the Python package keys its compiled functions by it).
/// ROWS (the degree class and the heavy-row thresholds) changes only lanes
/// and splits, which compute the same function on every graph, so a variant
/// compiled for other ROWS may stand in; SHAPE (the small-graph class,
/// GraphStats::smallGraphClass) decides which kernels exist and which graphs
/// a Program accepts, and must match.
std::string scheduleKey(const GraphStats &stats);

} // namespace gnn

#endif // GNN_ANALYSIS_SCHEDULE_H
