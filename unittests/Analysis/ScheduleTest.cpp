//===- ScheduleTest.cpp - the schedule chooser ----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Schedule.h"

#include <gtest/gtest.h>

using namespace gnn;

namespace {

ScheduleProblem problem(GroupKind kind, int64_t row, double degree) {
  ScheduleProblem p;
  p.kind = kind;
  p.rowElements = row;
  p.graph.nodes = p.graph.largestGraph = p.graph.smallestGraph = 1000;
  p.graph.edges = static_cast<int64_t>(degree * 1000 + 0.5);
  return p;
}

TEST(Schedule, HalfPrecisionRowsReadSixteenBytesAtOnce) {
  // bf16 / f16 rows: 8 elements per 16-byte access where the row allows.
  ScheduleProblem half = problem(GroupKind::Spmm, 64, 2.0);
  half.elementBytes = 2;
  Schedule s = chooseSchedule(half);
  EXPECT_EQ(s.vector, 8);
  EXPECT_EQ(s.lanes, 8); // 64 halves in vectors of 8: 8 lanes
  EXPECT_EQ(s.verify(half), "");
  // 12 halves: no 8 divides them, 4 does.
  half.rowElements = 12;
  EXPECT_EQ(chooseSchedule(half).vector, 4);
  // An extremum with winner codes: a code beside each value, so vectors of
  // 4 (the f32 kernel's state per lane), 32 lanes over 128 halves.
  half.rowElements = 128;
  half.trackWinner = true;
  EXPECT_EQ(chooseSchedule(half).vector, 4);
  EXPECT_EQ(chooseSchedule(half).lanes, 32);
  half.trackWinner = false;
  EXPECT_EQ(chooseSchedule(half).vector, 8);
  // Attention: the vector also divides the head width (4 heads x 4).
  ScheduleProblem att = problem(GroupKind::Attention, 16, 2.0);
  att.innerElements = 4;
  att.elementBytes = 2;
  EXPECT_EQ(chooseSchedule(att).vector, 4);
  att.rowElements = 64;
  att.innerElements = 16;
  EXPECT_EQ(chooseSchedule(att).vector, 8);
  // A vector of 8 is 32 bytes of f32: not one access.
  Schedule eight;
  eight.lanes = 8;
  eight.vector = 8;
  EXPECT_EQ(eight.verify(problem(GroupKind::Spmm, 64, 2.0)),
            "vector must be 1, 2 or 4 (8 for 2-byte elements)");
  half.rowElements = 64;
  EXPECT_EQ(eight.verify(half), "");
  ScheduleProblem bad = problem(GroupKind::Spmm, 64, 2.0);
  bad.elementBytes = 3;
  EXPECT_NE(bad.check(), "");
}

TEST(Schedule, AggregationsAreRowParallelOverFeatures) {
  Schedule s = chooseSchedule(problem(GroupKind::Spmm, 64, 2.0));
  EXPECT_EQ(s.vector, 4);
  EXPECT_EQ(s.lanes, 16); // 64 floats in float4: 16 lanes
  EXPECT_EQ(s.verify(problem(GroupKind::Spmm, 64, 2.0)), "");
  // Long rows: a whole warp per row.
  EXPECT_EQ(chooseSchedule(problem(GroupKind::Spmm, 64, 30)).lanes, 32);
  // Odd widths fall back to narrower vectors.
  Schedule odd = chooseSchedule(problem(GroupKind::Reduce, 6, 1.0));
  EXPECT_EQ(odd.vector, 2);
  EXPECT_EQ(odd.lanes, 4);
  EXPECT_EQ(chooseSchedule(problem(GroupKind::Reduce, 7, 1.0)).vector, 1);
  // Long rows are split across the GPU, and only for aggregations.
  ScheduleProblem hub = problem(GroupKind::Spmm, 64, 13);
  EXPECT_EQ(chooseSchedule(hub).split, 0);
  hub.graph.maxInDegree = 9458;
  EXPECT_EQ(chooseSchedule(hub).split, 128);
  EXPECT_EQ(chooseSchedule(hub).verify(hub), "");
  ScheduleProblem softmax = problem(GroupKind::EdgeSoftmax, 4, 13);
  softmax.graph.maxInDegree = 9458;
  EXPECT_EQ(chooseSchedule(softmax).split, 0);
  Schedule bad = chooseSchedule(softmax);
  bad.split = 512;
  EXPECT_NE(bad.verify(softmax), "");
  // Wide rows are capped at a warp.
  EXPECT_EQ(chooseSchedule(problem(GroupKind::Spmm, 4096, 1.0)).lanes, 32);
}

TEST(Schedule, AttentionIsRowParallelPerHead) {
  // 4 heads x 16 features: float4 loads, lanes like an spmm of 64 floats.
  ScheduleProblem p = problem(GroupKind::Attention, 64, 2.0);
  p.innerElements = 16;
  ASSERT_EQ(p.check(), "");
  Schedule s = chooseSchedule(p);
  EXPECT_EQ(s.vector, 4);
  EXPECT_EQ(s.lanes, 16);
  EXPECT_EQ(s.split, 0);
  EXPECT_EQ(s.verify(p), "");
  p.graph.edges = 13000;
  EXPECT_EQ(chooseSchedule(p).lanes, 32);
  // The vector divides the features of one head too: 4 heads x 2 features
  // take float2 although the row of 8 alone would take float4.
  ScheduleProblem narrow = problem(GroupKind::Attention, 8, 2.0);
  narrow.innerElements = 2;
  EXPECT_EQ(chooseSchedule(problem(GroupKind::Spmm, 8, 2.0)).vector, 4);
  Schedule n = chooseSchedule(narrow);
  EXPECT_EQ(n.vector, 2);
  EXPECT_EQ(n.lanes, 4);
  EXPECT_EQ(n.verify(narrow), "");
  n.vector = 4;
  EXPECT_NE(n.verify(narrow), "") << "float4 straddles two heads";
  ScheduleProblem odd = problem(GroupKind::Attention, 12, 2.0);
  odd.innerElements = 3;
  EXPECT_EQ(chooseSchedule(odd).vector, 1);
  // Heavy rows are split like an aggregation's.
  p.graph.maxInDegree = 9458;
  EXPECT_EQ(chooseSchedule(p).split, 128);
  EXPECT_EQ(chooseSchedule(p).verify(p), "");
  // The feature width must divide the row and be positive.
  ScheduleProblem bad = problem(GroupKind::Attention, 64, 2.0);
  bad.innerElements = 6;
  EXPECT_NE(bad.check(), "");
  bad.innerElements = 0;
  EXPECT_NE(bad.check(), "");
  // Attention splits heavy rows like aggregations.
  Schedule split = chooseSchedule(p);
  split.split = 32;
  EXPECT_EQ(split.verify(p), "");
}

TEST(Schedule, SddmmDotProductsTakeATeamOfLanes) {
  // A score per edge from rows of 128 bf16: 16 vectors of 8 elements, 4 per
  // lane: 4 lanes, whatever the graph (the dot product's length decides).
  ScheduleProblem p = problem(GroupKind::Sddmm, 1, 2.0);
  p.innerElements = 128;
  p.elementBytes = 2;
  ASSERT_EQ(p.check(), "");
  Schedule s = chooseSchedule(p);
  EXPECT_EQ(s.vector, 8);
  EXPECT_EQ(s.lanes, 4);
  EXPECT_EQ(s.split, 0);
  EXPECT_EQ(s.verify(p), "") << "the vector divides the dot, not the row of 1";
  p.graph.edges = 40000;
  EXPECT_EQ(chooseSchedule(p).lanes, 4);
  // f32: 32 float4, 8 lanes; capped at a warp; 20 floats: 5 float4, 2
  // lanes; a 3-element dot: 3 scalars, one thread.
  p.elementBytes = 4;
  EXPECT_EQ(chooseSchedule(p).vector, 4);
  EXPECT_EQ(chooseSchedule(p).lanes, 8);
  p.innerElements = 4096;
  EXPECT_EQ(chooseSchedule(p).lanes, 32);
  p.innerElements = 20;
  EXPECT_EQ(chooseSchedule(p).lanes, 2);
  p.innerElements = 3;
  EXPECT_EQ(chooseSchedule(p).vector, 1);
  EXPECT_EQ(chooseSchedule(p).lanes, 1);
  s.vector = 4;
  EXPECT_NE(s.verify(p), "") << "float4 does not divide a dot of 3";
  // Element-wise sddmms and gathers: a thread per element.
  ScheduleProblem mul = problem(GroupKind::Sddmm, 128, 2.0);
  EXPECT_EQ(chooseSchedule(mul).lanes, 1);
  EXPECT_EQ(chooseSchedule(mul).vector, 1);
  EXPECT_EQ(chooseSchedule(problem(GroupKind::Gather, 128, 2.0)).lanes, 1);
}

/// The statistics of a graph with `nodes` nodes, `edges` edges and largest
/// in-degree `maxIn` (mean degree edges / nodes).
static ScheduleProblem graph(GroupKind kind, int64_t nodes, int64_t edges,
                             int64_t maxIn) {
  ScheduleProblem p = problem(kind, 128, 1.0);
  p.graph.nodes = p.graph.largestGraph = p.graph.smallestGraph = nodes;
  p.graph.edges = edges;
  p.graph.maxInDegree = maxIn;
  return p;
}

TEST(Schedule, SplitFollowsTheDegrees) {
  // The statistics of the sweep's graphs (bench/results/split-s55/).
  ScheduleProblem pubmed = graph(GroupKind::Spmm, 19717, 88648, 171);
  ScheduleProblem musae = graph(GroupKind::Spmm, 37700, 578006, 9458);
  ScheduleProblem blog = graph(GroupKind::Spmm, 10312, 667966, 3992);
  ScheduleProblem arxiv = graph(GroupKind::Spmm, 169343, 2332486, 22389);
  ScheduleProblem reddit = graph(GroupKind::Spmm, 232965, 114615892, 77563);
  EXPECT_EQ(chooseSplit(pubmed), 0) << "no row long enough to pay 2 launches";
  EXPECT_EQ(chooseSplit(musae), 128) << "mean 15.3: at least 128";
  EXPECT_EQ(chooseSplit(blog), 128) << "mean 64.8";
  EXPECT_EQ(chooseSplit(arxiv), 128) << "mean 13.8";
  EXPECT_EQ(chooseSplit(reddit), 512) << "mean 492: the power of two above";
  // A graph whose mean is near its largest in-degree: no row above the
  // threshold, so no split (its two launches would have nothing to do).
  EXPECT_EQ(chooseSplit(graph(GroupKind::Spmm, 1000, 300000, 400)), 0);
  EXPECT_EQ(chooseSplit(graph(GroupKind::Spmm, 1000, 300000, 513)), 512);
  for (ScheduleProblem *p : {&pubmed, &musae, &blog, &arxiv, &reddit})
    p->kind = GroupKind::Attention, p->innerElements = 32;
  EXPECT_EQ(chooseSplit(pubmed), 32) << "attention splits from shorter rows";
  EXPECT_EQ(chooseSplit(blog), 128);
  EXPECT_EQ(chooseSplit(arxiv), 128);
  EXPECT_EQ(chooseSplit(reddit), 512);
  // Reductions split like spmm; other kinds never do.
  EXPECT_EQ(chooseSplit(graph(GroupKind::Reduce, 37700, 578006, 9458)), 128);
  EXPECT_EQ(chooseSchedule(graph(GroupKind::EdgeSoftmax, 37700, 578006, 9458))
                .split,
            0);
  // The split is part of the schedule and verifies.
  EXPECT_EQ(chooseSchedule(blog).split, 128);
  EXPECT_EQ(chooseSchedule(blog).verify(blog), "");
}

TEST(Schedule, KeysSeparateGraphsWithDifferentSchedules) {
  GraphStats a = graph(GroupKind::Spmm, 37700, 578006, 9458).graph;
  GraphStats b = a;
  b.maxInDegree = 5000; // same decisions
  EXPECT_EQ(scheduleKey(a), scheduleKey(b));
  b.maxInDegree = 200; // no split for aggregations, split for attention
  EXPECT_NE(scheduleKey(a), scheduleKey(b));
  b = a;
  b.edges = 100000; // mean degree 2.7: narrower teams
  EXPECT_NE(scheduleKey(a), scheduleKey(b));
  // Means 30 and 300: one degree class, heavy rows from 128 or 512 edges.
  a.edges = 37700 * 30;
  b = a;
  b.edges = 37700 * 300;
  EXPECT_NE(scheduleKey(a), scheduleKey(b));
}

TEST(Schedule, KeysEndWithTheSmallGraphClass) {
  GraphStats g = graph(GroupKind::Spmm, 4096 * 18, 4096 * 37, 4).graph;
  g.graphs = 4096;
  g.smallestGraph = 3;
  for (auto [largest, cls] : {std::pair<int64_t, int64_t>{1, 8},
                              {8, 8},
                              {9, 16},
                              {29, 32},
                              {128, 128},
                              {129, 0}}) {
    g.largestGraph = largest;
    EXPECT_EQ(g.smallGraphClass(), cls) << largest;
    std::string key = scheduleKey(g);
    // ROWS|SHAPE: the row part is what a stand-in variant may differ in.
    ASSERT_NE(key.find('|'), std::string::npos) << key;
    EXPECT_EQ(key.substr(key.find('|') + 1), std::to_string(cls)) << key;
  }
  g.largestGraph = 30;
  GraphStats other = g;
  other.largestGraph = 20;
  EXPECT_EQ(scheduleKey(g), scheduleKey(other)) << "one class: 32";
  GraphStats none;
  EXPECT_EQ(none.smallGraphClass(), 0) << "no nodes";
}

TEST(Schedule, SoftmaxTeamsGrowWithDegree) {
  EXPECT_EQ(chooseSchedule(problem(GroupKind::EdgeSoftmax, 4, 2.1)).lanes, 4);
  EXPECT_EQ(chooseSchedule(problem(GroupKind::EdgeSoftmax, 4, 8)).lanes, 8);
  EXPECT_EQ(chooseSchedule(problem(GroupKind::EdgeSoftmax, 4, 14)).lanes, 16);
  EXPECT_EQ(chooseSchedule(problem(GroupKind::EdgeSoftmax, 4, 65)).lanes, 32);
}

TEST(Schedule, OtherKinds) {
  // A thread per element (the mapping is the family's), no split.
  for (GroupKind kind : {GroupKind::Sddmm, GroupKind::Gather, GroupKind::Degree,
                         GroupKind::Elementwise}) {
    ScheduleProblem p = problem(kind, 64, 10);
    Schedule s = chooseSchedule(p);
    EXPECT_EQ(s.lanes, 1);
    EXPECT_EQ(s.block, 256);
    EXPECT_EQ(s.split, 0);
    EXPECT_FALSE(splitsRows(kind));
    s.split = 32;
    EXPECT_EQ(s.verify(p), "only aggregations and attention can split heavy "
                           "rows");
  }
  EXPECT_TRUE(splitsRows(GroupKind::Spmm));
  EXPECT_TRUE(splitsRows(GroupKind::Reduce));
  EXPECT_TRUE(splitsRows(GroupKind::Attention));
  EXPECT_FALSE(splitsRows(GroupKind::EdgeSoftmax));
}

TEST(Schedule, CheckAndVerifyRejectBadInput) {
  EXPECT_NE(problem(GroupKind::Spmm, 0, 1).check(), "");
  EXPECT_NE(problem(GroupKind::Spmm, 8, -1).check(), "");
  ScheduleProblem inconsistent = problem(GroupKind::Spmm, 8, 1);
  inconsistent.graph.maxInDegree = inconsistent.graph.edges + 1;
  EXPECT_NE(inconsistent.check(), "");
  EXPECT_EQ(problem(GroupKind::Spmm, 8, 1).check(), "");
  // Rows near 2^63 (the planner's power-of-two loop used to spin forever on
  // them) are refused; the widest row allowed gets a schedule.
  EXPECT_EQ(problem(GroupKind::Spmm, INT64_MAX, 1).check(),
            "row of 9223372036854775807 elements (expected 1 to "
            "1099511627776)");
  ScheduleProblem widest =
      problem(GroupKind::Spmm, ScheduleProblem::kMaxRowElements, 1);
  ASSERT_EQ(widest.check(), "");
  EXPECT_EQ(chooseSchedule(widest).verify(widest), "");
  Schedule s = chooseSchedule(problem(GroupKind::Spmm, 64, 2));
  s.lanes = 3;
  EXPECT_NE(s.verify(problem(GroupKind::Spmm, 64, 2)), "");
  s = chooseSchedule(problem(GroupKind::Spmm, 64, 2));
  s.vector = 4;
  EXPECT_NE(s.verify(problem(GroupKind::Spmm, 6, 2)), "")
      << "4 does not divide 6";
}

} // namespace
