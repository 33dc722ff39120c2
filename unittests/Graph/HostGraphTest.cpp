//===- HostGraphTest.cpp - host graphs, loaders, generators ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace gnn;
namespace fs = std::filesystem;

namespace {

/// A fresh temporary folder per test.
class TempDir {
public:
  TempDir() {
    path = fs::temp_directory_path() /
           ("gnnc-test-" + std::to_string(::testing::UnitTest::GetInstance()
                                              ->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

void writeText(const fs::path &p, const std::string &text) {
  std::ofstream(p) << text;
}

void writeGz(const fs::path &p, const std::string &text) {
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

TEST(HostGraph, EdgeFileWithDeclaredNodes) {
  TempDir dir;
  writeText(dir.path / "g.txt", "# nodes 5\n0 1\n\n1 2  \n2 2\n");
  GraphOrError r = loadGraph((dir.path / "g.txt").string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numNodes, 5);
  EXPECT_EQ(r.graph.src, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(r.graph.dst, (std::vector<int64_t>{1, 2, 2}));
}

TEST(HostGraph, EdgeFileNodeCountFromIds) {
  TempDir dir;
  writeGz(dir.path / "g.txt.gz", "3 0\n0 7\n");
  GraphOrError r = loadGraph((dir.path / "g.txt.gz").string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numNodes, 8);
  EXPECT_EQ(r.graph.numEdges(), 2);
}

TEST(HostGraph, DatasetFolder) {
  TempDir dir;
  writeText(dir.path / "meta.txt", "nodes 4\nedges 3\ndirected 0\n");
  writeGz(dir.path / "edges.txt.gz", "0 1\n1 0\n2 3\n");
  writeGz(dir.path / "graph_ids.txt.gz", "0\n0\n1\n1\n");
  GraphOrError r = loadGraph(dir.path.string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numGraphs(), 2);
  GraphStats s = computeStats(r.graph);
  EXPECT_EQ(s.largestGraph, 2);
  EXPECT_EQ(s.graphs, 2);
}

TEST(HostGraph, DatasetEdgeCountMismatch) {
  TempDir dir;
  writeText(dir.path / "meta.txt", "nodes 4\nedges 5\n");
  writeGz(dir.path / "edges.txt.gz", "0 1\n");
  GraphOrError r = loadGraph(dir.path.string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("meta.txt declares 5 edges but the file has 1"),
            std::string::npos)
      << r.error;
}

TEST(HostGraph, CrossGraphEdgeRejected) {
  TempDir dir;
  writeText(dir.path / "meta.txt", "nodes 4\n");
  writeGz(dir.path / "edges.txt.gz", "0 2\n");
  writeGz(dir.path / "graph_ids.txt.gz", "0\n0\n1\n1\n");
  GraphOrError r = loadGraph(dir.path.string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("edge 0 joins graph 0 and graph 1"), std::string::npos)
      << r.error;
}

TEST(HostGraph, Validation) {
  HostGraph g;
  g.numNodes = 3;
  g.src = {0, 1};
  g.dst = {1};
  EXPECT_NE(g.validate().find("source list has 2 entries"), std::string::npos);
  g.dst = {1, 3};
  EXPECT_NE(g.validate().find("edge 1 (1 -> 3) has a node id outside [0, 3)"),
            std::string::npos);
  g.dst = {1, 2};
  EXPECT_EQ(g.validate(), "");
  g.graphIds = {0, 1, 0};
  EXPECT_NE(g.validate().find("nondecreasing"), std::string::npos);
  g.graphIds = {0, 0};
  EXPECT_NE(g.validate().find("graph id list has 2 entries"), std::string::npos);
}

TEST(HostGraph, MalformedLines) {
  TempDir dir;
  writeText(dir.path / "g.txt", "0 1\n0 1 2\n");
  GraphOrError r = loadGraph((dir.path / "g.txt").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("g.txt:2: expected 'src dst' but found 3 numbers"),
            std::string::npos)
      << r.error;
  writeText(dir.path / "h.txt", "0 1\n-x 2\n");
  r = loadGraph((dir.path / "h.txt").string());
  EXPECT_NE(r.error.find("h.txt:2: expected an integer but found '-x'"),
            std::string::npos)
      << r.error;
}

TEST(HostGraph, EmptyGraphs) {
  GraphOrError r = loadGraph("powerlaw:nodes=0,edges=0");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numNodes, 0);
  EXPECT_EQ(r.graph.numEdges(), 0);
  r = loadGraph("powerlaw:nodes=5,edges=0");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(computeStats(r.graph).isolatedNodes, 5);
  r = loadGraph("powerlaw:nodes=0,edges=4");
  EXPECT_FALSE(r.ok());
}

TEST(HostGraph, PowerLawIsDeterministicAndSkewed) {
  HostGraph a = generatePowerLaw(10000, 100000, 42);
  HostGraph b = generatePowerLaw(10000, 100000, 42);
  HostGraph c = generatePowerLaw(10000, 100000, 43);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_NE(a.dst, c.dst);
  EXPECT_EQ(a.validate(), "");
  GraphStats s = computeStats(a);
  // Zipf(1) over 10^4 ranks: the top node takes ~1/H(10^4) ~ 10% of edges.
  EXPECT_GT(s.maxInDegree, 50 * s.meanDegree);
  EXPECT_LT(s.maxOutDegree, 5 * s.meanDegree);
}

TEST(HostGraph, BatchOfSmallGraphs) {
  GraphOrError r = loadGraph("batch:graphs=50,min=5,max=9,degree=2.5,seed=1");
  ASSERT_TRUE(r.ok()) << r.error;
  const HostGraph &g = r.graph;
  EXPECT_EQ(g.validate(), "");
  EXPECT_EQ(g.numGraphs(), 50);
  GraphStats s = computeStats(g);
  EXPECT_LE(s.largestGraph, 9);
  EXPECT_GE(g.numNodes, 50 * 5);
  EXPECT_LE(g.numNodes, 50 * 9);
  EXPECT_EQ(s.isolatedNodes, 0) << "every small graph is connected";
  EXPECT_EQ(g.numEdges() % 2, 0) << "both directions are stored";
}

TEST(HostGraph, SpecErrors) {
  EXPECT_NE(loadGraph("batch:graphs=3,min=4,max=2").error.find("1 <= min <= max"),
            std::string::npos);
  EXPECT_NE(loadGraph("powerlaw:nodes=-3,edges=1").error.find("nonnegative"),
            std::string::npos);
  EXPECT_NE(loadGraph("powerlaw:nodes").error.find("expected key=value"),
            std::string::npos);
  EXPECT_NE(loadGraph("/no/such/file").error.find("no graph '/no/such/file'"),
            std::string::npos);
}

} // namespace
