//===- Schedule.cpp - choosing a schedule for a kernel group --------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Schedule.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace gnn;

std::string ScheduleProblem::check() const {
  if (rowElements < 1 || rowElements > kMaxRowElements)
    return "row of " + std::to_string(rowElements) + " elements (expected 1 to " +
           std::to_string(kMaxRowElements) + ")";
  if (innerElements < 1)
    return "inner width of " + std::to_string(innerElements) + " elements";
  if (kind == GroupKind::Attention && rowElements % innerElements)
    return "the feature width " + std::to_string(innerElements) +
           " does not divide the row of " + std::to_string(rowElements);
  if (std::string bad = graph.check(); !bad.empty())
    return "graph statistics: " + bad;
  if (elementBytes != 2 && elementBytes != 4 && elementBytes != 8)
    return "element size of " + std::to_string(elementBytes) +
           " bytes (expected 2, 4 or 8)";
  return "";
}

/// The smallest power of two >= v, for 1 <= v <= 2^62 (check() bounds rows
/// far below that; the loop must not shift past the sign bit).
static int64_t nextPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p < v && p < (int64_t(1) << 62))
    p <<= 1;
  return p;
}

/// The widest vector of a 16-byte access dividing `width` elements of
/// `elementBytes` each: 8 bf16 or f16 elements, 4 f32 (an f64 vector of 4 is
/// two accesses), else 2 or 1.
static int64_t vectorFor(int64_t width, int64_t elementBytes) {
  return elementBytes == 2 && width % 8 == 0 ? 8
         : width % 4 == 0                    ? 4
         : width % 2 == 0                    ? 2
                                             : 1;
}

Schedule gnn::chooseSchedule(const ScheduleProblem &p) {
  Schedule s;
  switch (p.kind) {
  case GroupKind::Spmm:
  case GroupKind::Reduce:
  case GroupKind::Attention: {
    // Attention also reads the score's operands per head: the vector must
    // not straddle two heads.
    int64_t width = p.kind == GroupKind::Attention
                        ? std::gcd(p.rowElements, p.innerElements)
                        : p.rowElements;
    s.vector = vectorFor(width, p.elementBytes);
    // With winner codes a lane carries a code beside each extremum: 16
    // values at vectors of 8 bf16 (48 registers, 5 blocks of 256 an SM,
    // against f32's 31 and 8). Vectors of 4 keep the f32 kernel's state.
    // The bf16 training forward of max on an H200: arxiv-like 0.489 ->
    // 0.359 ms, musae-github 0.136 -> 0.112; blogcatalog, whose 10K rows
    // fill less than a wave, 0.126 -> 0.132 (bench/results/ties-walk-s29/).
    if (p.trackWinner)
      s.vector = std::min<int64_t>(s.vector, 4);
    // Lanes over the features; where the row is narrower than a warp and
    // rows are long enough, the rest of the warp takes other edges of the
    // same row (the emitter derives the edge groups from lanes and width).
    s.lanes = std::min<int64_t>(32, nextPowerOfTwo((p.rowElements + s.vector - 1) / s.vector));
    if (p.graph.meanDegree() >= 4)
      s.lanes = 32;
    s.split = chooseSplit(p);
    // Blocks of two warps: a block holds its SM slot until its slowest row
    // is done, and rows of one block differ in length, so eight rows a
    // block left warps the registers allow idle (reddit-like's bf16 GATv2 on
    // an H200: 34 % achieved against 50 % theoretical occupancy). 32 blocks
    // of 64 an SM still hold every warp the registers allow. H200, blocks of
    // 64 against 256 (bench/results/softmax-s58): GATv2 forward+backward
    // arxiv-like bf16 2.98 -> 2.23 ms, f32 2.42 -> 2.21, musae-github bf16
    // 0.687 -> 0.540; GATv2 forward reddit-like bf16 10.58 -> 9.93,
    // qm9-batch4096 (mean degree 2) 4-8 % faster; aggregations within the
    // runs' noise or faster (bf16 spmm sum on musae-github and blogcatalog
    // 7-9 %). The heavy rows' kernels keep blocks of 256 (SplitHeavyRows).
    s.block = kRowBlock;
    return s;
  }
  case GroupKind::EdgeSoftmax: {
    double d = p.graph.meanDegree();
    s.lanes = d >= 24 ? 32 : d >= 12 ? 16 : d >= 6 ? 8 : 4;
    break;
  }
  case GroupKind::Sddmm: {
    // A dot product per element of the edge result: a team of lanes per
    // element, each lane taking up to 4 vectors of 16 bytes of both rows (a
    // thread per element would read 2 * innerElements scalars alone, from
    // rows 32 apart within a warp). Four vectors per lane rather than one:
    // more loads in flight per lane and fewer shuffles per element; on an
    // H200 reddit-like's f32 dot of 128 took 17.3 ms with 32 lanes, 13.9
    // with 16 and 9.9 with 8 (bench/results/sddmm-teams-h200-s21).
    int64_t f = p.innerElements;
    if (f == 1)
      break;
    s.vector = vectorFor(f, p.elementBytes);
    int64_t vectors = (f + s.vector - 1) / s.vector;
    s.lanes = std::min<int64_t>(
        32, nextPowerOfTwo((vectors + kSddmmVectorsPerLane - 1) /
                           kSddmmVectorsPerLane));
    break;
  }
  case GroupKind::Gather:
    // A thread per run of 16 bytes of the edge result (lowerEdgeMap): the
    // gathered rows and edge tensors read, and the result stored, as one
    // vector each, the edge's indices loaded once a run.
    s.vector = vectorFor(p.rowElements, p.elementBytes);
    break;
  case GroupKind::Degree:
  case GroupKind::Elementwise:
    break;
  }
  s.block = 256;
  return s;
}

bool gnn::splitsRows(GroupKind kind) {
  return kind == GroupKind::Spmm || kind == GroupKind::Reduce ||
         kind == GroupKind::Attention;
}

GraphStats ScheduleProblem::defaultStats() {
  GraphStats g;
  g.nodes = g.largestGraph = g.smallestGraph = 1000;
  g.edges = 16000;
  return g;
}

int64_t gnn::chooseSplit(const ScheduleProblem &p) {
  const GraphStats &g = p.graph;
  bool attention = p.kind == GroupKind::Attention;
  if (g.maxInDegree <= (attention ? 128 : 256))
    return 0;
  if (attention && g.maxInDegree <= 1024)
    return 32;
  // A power of two at or above the mean degree: the light kernel's teams
  // take the typical row. On an H200 (bench/results/split-s55/) reddit-like
  // (mean 492) gained 12 % in the bf16 spmm at 512 against 32 or 128,
  // arxiv-like (mean 13.8) 7 % at 128 against 32, and musae-github and
  // blogcatalog (mean 15 and 65) ran 24-70 % slower at 32 or 64 than at 128.
  // Higher, reddit-like's forward at 1024-8192 against 512: f32 up to 8 %
  // slower, bf16 at most 3.5 % faster (bench/results/minblocks-s60/). (A
  // row above 128 edges makes the mean at least 1.)
  int64_t mean = static_cast<int64_t>(std::ceil(g.meanDegree()));
  int64_t split = std::max<int64_t>(128, nextPowerOfTwo(mean));
  return split < g.maxInDegree ? split : 0;
}

std::string gnn::scheduleKey(const GraphStats &g) {
  double d = g.meanDegree();
  // Lanes of aggregations (mean degree 4) and of edge softmax (6, 12, 24).
  int degreeClass = (d >= 4) + (d >= 6) + (d >= 12) + (d >= 24);
  ScheduleProblem p;
  p.graph = g;
  p.kind = GroupKind::Spmm;
  int64_t aggregation = chooseSplit(p);
  p.kind = GroupKind::Attention;
  int64_t attention = chooseSplit(p);
  return std::to_string(degreeClass) + "/" + std::to_string(aggregation) + "/" +
         std::to_string(attention) + "|" + std::to_string(g.smallGraphClass());
}

std::string Schedule::verify(const ScheduleProblem &p) const {
  if (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)))
    return "lanes must be a power of two in [1, 32]";
  if (block < 32 || block > 1024 || block % 32 || block % lanes)
    return "block must be a multiple of 32 (and of lanes) in [32, 1024]";
  if (vector != 1 && vector != 2 && vector != 4 &&
      !(vector == 8 && p.elementBytes == 2))
    return "vector must be 1, 2 or 4 (8 for 2-byte elements)";
  if (split < 0 || (split > 0 && split < 32))
    return "split must be 0 or at least 32";
  if (split && !splitsRows(p.kind))
    return "only aggregations and attention can split heavy rows";
  // An sddmm's vectors cut its dot products, not its result rows.
  if (p.kind == GroupKind::Sddmm ? p.innerElements % vector
                                 : p.rowElements % vector)
    return "vector width " + std::to_string(vector) + " does not divide the " +
           (p.kind == GroupKind::Sddmm ? "dot product of " : "row of ") +
           std::to_string(p.kind == GroupKind::Sddmm ? p.innerElements
                                                     : p.rowElements);
  if (p.kind == GroupKind::Attention && p.innerElements % vector)
    return "vector width " + std::to_string(vector) +
           " does not divide the feature width " +
           std::to_string(p.innerElements);
  return "";
}
