//===- GraphStatsTest.cpp - the compiler's graph statistics ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/GraphStats.h"

#include <gtest/gtest.h>

using namespace gnn;

namespace {

/// Statistics of in-degrees `degrees` (histogram and maximum only).
GraphStats fromDegrees(const std::vector<int64_t> &degrees) {
  GraphStats s;
  s.nodes = s.largestGraph = s.smallestGraph = degrees.size();
  for (int64_t d : degrees) {
    s.edges += d;
    s.maxInDegree = std::max(s.maxInDegree, d);
    ++s.rowsByDegree[GraphStats::bucketOf(d)];
    s.edgesByDegree[GraphStats::bucketOf(d)] += d;
  }
  s.p50 = s.p90 = s.p99 = s.p999 = 0;
  return s;
}

TEST(GraphStats, BucketsArePowersOfTwo) {
  EXPECT_EQ(GraphStats::bucketOf(0), 0);
  EXPECT_EQ(GraphStats::bucketOf(1), 0);
  EXPECT_EQ(GraphStats::bucketOf(2), 1);
  EXPECT_EQ(GraphStats::bucketOf(3), 2);
  EXPECT_EQ(GraphStats::bucketOf(4), 2);
  EXPECT_EQ(GraphStats::bucketOf(5), 3);
  EXPECT_EQ(GraphStats::bucketOf(int64_t(1) << 20), 20);
  EXPECT_EQ(GraphStats::bucketOf(INT64_MAX), GraphStats::kDegreeBuckets - 1);
}

TEST(GraphStats, RowsAboveAPowerOfTwoAreExact) {
  GraphStats s = fromDegrees({0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 300});
  ASSERT_TRUE(s.hasHistogram());
  ASSERT_EQ(s.check(), "");
  EXPECT_EQ(s.rowsAbove(4), 6);  // 5 8 9 16 17 300
  EXPECT_EQ(s.edgesAbove(4), 5 + 8 + 9 + 16 + 17 + 300);
  EXPECT_EQ(s.rowsAbove(16), 2); // 17 300
  EXPECT_EQ(s.rowsAbove(256), 1);
  EXPECT_EQ(s.rowsAbove(512), 0);
  EXPECT_EQ(s.rowsAbove(1), 9);
  // Without a histogram: the largest row only.
  GraphStats bare;
  bare.nodes = 10;
  bare.edges = 400;
  bare.maxInDegree = 300;
  EXPECT_EQ(bare.rowsAbove(256), 1);
  EXPECT_EQ(bare.edgesAbove(256), 300);
  EXPECT_EQ(bare.rowsAbove(300), 0);
}

TEST(GraphStats, OptionFormRoundTrips) {
  GraphStats s = fromDegrees({0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 300});
  s.p50 = 4;
  s.p90 = 17;
  s.p99 = s.p999 = 300;
  s.maxOutDegree = 40;
  s.directed = true;
  s.csrOrder = true;
  s.graphs = 2;
  s.smallestGraph = 3;
  s.largestGraph = 8;
  std::string text = s.toOption();
  EXPECT_EQ(text.find(' '), std::string::npos) << text;
  GraphStats back;
  ASSERT_EQ(GraphStats::parseOption(text, back), "") << text;
  EXPECT_EQ(back.toOption(), text);
  EXPECT_EQ(back.toJson(), s.toJson());
}

TEST(GraphStats, OptionFormRoundTripsGraphsWithoutEdges) {
  // Sizes at 0 are written: parsing fills sizes that are not named.
  for (std::vector<int64_t> degrees : {std::vector<int64_t>{0, 0, 0, 0},
                                       std::vector<int64_t>{}}) {
    GraphStats s = fromDegrees(degrees);
    s.isolatedNodes = s.nodes;
    GraphStats back;
    ASSERT_EQ(GraphStats::parseOption(s.toOption(), back), "") << s.toOption();
    EXPECT_EQ(back.toJson(), s.toJson()) << s.toOption();
  }
}

TEST(GraphStats, OptionFormByHand) {
  GraphStats s;
  ASSERT_EQ(GraphStats::parseOption("mean-degree:13,max-in:5000", s), "");
  EXPECT_EQ(s.nodes, 1000);
  EXPECT_EQ(s.edges, 13000);
  EXPECT_EQ(s.maxInDegree, 5000);
  EXPECT_EQ(s.largestGraph, 1000);
  ASSERT_EQ(GraphStats::parseOption("nodes:10,edges:20", s), "");
  EXPECT_DOUBLE_EQ(s.meanDegree(), 2.0);
  EXPECT_EQ(s.maxInDegree, 0);
}

TEST(GraphStats, BadOptionsAreDiagnosed) {
  GraphStats s;
  s.nodes = 7;
  EXPECT_EQ(GraphStats::parseOption("nodes=3", s),
            "expected key:value, found 'nodes=3'");
  EXPECT_EQ(GraphStats::parseOption("width:3", s), "unknown statistic 'width'");
  EXPECT_EQ(GraphStats::parseOption("nodes:-3", s),
            "'nodes' expects a nonnegative integer, found '-3'");
  EXPECT_EQ(GraphStats::parseOption("nodes:3x", s),
            "'nodes' expects a nonnegative integer, found '3x'");
  EXPECT_EQ(GraphStats::parseOption("directed:2", s),
            "'directed' expects 0 or 1, found '2'");
  EXPECT_EQ(GraphStats::parseOption("nodes:10,nodes:5000000,edges:5", s),
            "'nodes' is given twice");
  EXPECT_EQ(GraphStats::parseOption("nodes:10,mean-degree:2,mean-degree:3", s),
            "'mean-degree' is given twice");
  EXPECT_NE(GraphStats::parseOption("nodes:2,rows-by-degree:1/1,edges-by-degree:0/5",
                                    s),
            "")
      << "histogram disagrees with the edge count";
  EXPECT_NE(GraphStats::parseOption("nodes:10,edges:100,max-in:50,p50:60", s), "")
      << "quantile above the maximum";
  EXPECT_EQ(s.nodes, 7) << "a failed parse leaves the output alone";
}

} // namespace
