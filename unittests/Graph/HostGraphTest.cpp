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
#include <limits>
#include <numeric>
#include <random>

#include <sys/stat.h>
#include <unistd.h>

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

TEST(HostGraph, DatasetNodeCountChecked) {
  // A malformed or negative count was read as 0 or ignored; a huge one
  // aborted when the graph was built.
  for (const char *bad : {"-3", "abc", "12x"}) {
    TempDir dir;
    writeText(dir.path / "meta.txt", std::string("nodes ") + bad + "\n");
    writeGz(dir.path / "edges.txt.gz", "0 1\n");
    GraphOrError r = loadGraph(dir.path.string());
    EXPECT_NE(r.error.find("meta.txt: expected a nonnegative node count but "
                           "found '" + std::string(bad) + "'"),
              std::string::npos)
        << r.error;
  }
  TempDir dir;
  writeText(dir.path / "meta.txt", "nodes 4611686018427387904\n");
  writeGz(dir.path / "edges.txt.gz", "0 1\n");
  GraphOrError r = loadGraph(dir.path.string());
  // Refused from meta.txt alone, before the edges are read.
  EXPECT_NE(r.error.find("a graph of 4611686018427387904 nodes and 0 edges "
                         "needs more than 2^63 bytes of host memory"),
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

/// The graphs of block-per-graph kernels: the ids' graphs when given, else
/// the finest ranges of node ids no edge crosses.
TEST(HostGraph, GraphOffsets) {
  HostGraph g;
  g.numNodes = 7;
  // 0-2 joined by an edge given backwards, 3 alone (a self-loop), 4-6 by
  // a chain and a duplicate edge.
  g.src = {2, 3, 4, 6, 5, 5};
  g.dst = {0, 3, 5, 5, 6, 6};
  EXPECT_EQ(graphOffsets(g), (std::vector<int64_t>{0, 3, 4, 7}));
  GraphStats s = computeStats(g);
  EXPECT_EQ(s.graphs, 3);
  EXPECT_EQ(s.largestGraph, 3);
  EXPECT_EQ(s.smallestGraph, 1);
  // One long edge joins everything.
  g.src.push_back(0);
  g.dst.push_back(6);
  EXPECT_EQ(graphOffsets(g), (std::vector<int64_t>{0, 7}));
  // Graph ids decide when given; an id without nodes is an empty graph.
  g.src = {1};
  g.dst = {0};
  g.graphIds = {0, 0, 2, 2, 2, 3, 3};
  EXPECT_EQ(graphOffsets(g), (std::vector<int64_t>{0, 2, 2, 5, 7}));
  s = computeStats(g);
  EXPECT_EQ(s.graphs, 4);
  EXPECT_EQ(s.largestGraph, 3);
  EXPECT_EQ(s.smallestGraph, 0);
  // No edges: a graph per node; no nodes: none.
  g.graphIds.clear();
  g.src.clear();
  g.dst.clear();
  EXPECT_EQ(graphOffsets(g), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  g.numNodes = 0;
  EXPECT_EQ(graphOffsets(g), (std::vector<int64_t>{0}));
  EXPECT_EQ(computeStats(g).graphs, 0);
}

/// Without graph ids the offsets are the definition's, checked position by
/// position on random graphs of short edges (many ranges) with isolated
/// nodes, self-loops and duplicates, whatever the order of the edges; and
/// a batch of connected graphs with its ids dropped has its graphs.
TEST(HostGraph, GraphOffsetsAreTheFinestRangesNoEdgeCrosses) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    HostGraph g;
    g.numNodes = 1 + static_cast<int64_t>(rng() % 60);
    int64_t edges = static_cast<int64_t>(rng() % 40);
    for (int64_t k = 0; k < edges; ++k) {
      int64_t u = static_cast<int64_t>(rng() % g.numNodes);
      int64_t v = std::min<int64_t>(g.numNodes - 1,
                                    u + static_cast<int64_t>(rng() % 4));
      // Either direction, and a duplicate now and then.
      g.src.push_back(rng() % 2 ? u : v);
      g.dst.push_back(g.src.back() == u ? v : u);
      if (rng() % 8 == 0) {
        g.src.push_back(g.src.back());
        g.dst.push_back(g.dst.back());
      }
    }
    std::vector<int64_t> want = {0};
    for (int64_t i = 1; i < g.numNodes; ++i) {
      bool crossed = false;
      for (int64_t k = 0; k < g.numEdges(); ++k)
        crossed |= std::min(g.src[k], g.dst[k]) < i &&
                   i <= std::max(g.src[k], g.dst[k]);
      if (!crossed)
        want.push_back(i);
    }
    want.push_back(g.numNodes);
    EXPECT_EQ(graphOffsets(g), want) << "trial " << trial;
    GraphStats s = computeStats(g);
    EXPECT_EQ(s.graphs, static_cast<int64_t>(want.size()) - 1);
    int64_t largest = 0, smallest = g.numNodes;
    for (size_t k = 0; k + 1 < want.size(); ++k) {
      largest = std::max(largest, want[k + 1] - want[k]);
      smallest = std::min(smallest, want[k + 1] - want[k]);
    }
    EXPECT_EQ(s.largestGraph, largest);
    EXPECT_EQ(s.smallestGraph, smallest);
    // The edges in another order.
    std::vector<size_t> order(g.src.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::shuffle(order.begin(), order.end(), rng);
    HostGraph shuffled = g;
    for (size_t k = 0; k < order.size(); ++k) {
      shuffled.src[k] = g.src[order[k]];
      shuffled.dst[k] = g.dst[order[k]];
    }
    EXPECT_EQ(graphOffsets(shuffled), want) << "trial " << trial;
  }

  // generateBatch's graphs are connected (a random tree and more edges).
  HostGraph batch = generateBatch(40, 3, 12, 2.0, 5);
  std::vector<int64_t> graphs = graphOffsets(batch);
  ASSERT_EQ(graphs.size(), 41u);
  GraphStats withIds = computeStats(batch);
  batch.graphIds.clear();
  EXPECT_EQ(graphOffsets(batch), graphs);
  GraphStats without = computeStats(batch);
  EXPECT_EQ(without.graphs, 40);
  EXPECT_EQ(without.largestGraph, withIds.largestGraph);
  EXPECT_EQ(without.smallestGraph, withIds.smallestGraph);
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

TEST(HostGraph, GeneratorCountsAreWholeAndGivenOnce) {
  // A fractional count or seed was truncated, a repeated key silently took
  // the last value.
  for (auto [spec, needle] : std::vector<std::pair<std::string, std::string>>{
           {"powerlaw:nodes=10.7,edges=5",
            "expected a nonnegative integer for 'nodes' but found '10.7'"},
           {"powerlaw:nodes=10,edges=20,seed=1.5",
            "expected a nonnegative integer for 'seed' but found '1.5'"},
           {"batch:graphs=2.5", "expected a nonnegative integer for 'graphs'"},
           {"powerlaw:nodes=10,edges=5,nodes=20", "'nodes' given twice"}}) {
    GraphOrError r = loadGraph(spec);
    EXPECT_FALSE(r.ok()) << spec;
    EXPECT_NE(r.error.find(needle), std::string::npos) << r.error;
  }
  // Real-valued options stay real.
  EXPECT_TRUE(loadGraph("powerlaw:nodes=10,edges=20,alpha=1.5").ok());
  EXPECT_TRUE(loadGraph("batch:graphs=3,degree=2.5").ok());
}

TEST(HostGraph, NodesHeaderTakesOnlyACount) {
  TempDir dir;
  writeText(dir.path / "x.txt", "# nodes 3 extra\n0 1\n");
  GraphOrError r = loadGraph((dir.path / "x.txt").string());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("expected '# nodes N' with a nonnegative N"),
            std::string::npos)
      << r.error;
  writeText(dir.path / "y.txt", "# nodes 3  \n0 1\n");
  r = loadGraph((dir.path / "y.txt").string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numNodes, 3);
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
  EXPECT_GT(s.maxInDegree, 50 * s.meanDegree());
  EXPECT_LT(s.maxOutDegree, 5 * s.meanDegree());
}

TEST(HostGraph, BipartiteGraphs) {
  // The generator: sources below src, destinations below dst, seeded.
  GraphOrError r = loadGraph("bipartite:src=300,dst=40,edges=5000,seed=3");
  ASSERT_TRUE(r.ok()) << r.error;
  const HostGraph &g = r.graph;
  EXPECT_TRUE(g.bipartite());
  EXPECT_EQ(g.srcNodes(), 300);
  EXPECT_EQ(g.dstNodes(), 40);
  EXPECT_EQ(g.numNodes, 300);
  EXPECT_EQ(g.numEdges(), 5000);
  EXPECT_EQ(g.validate(), "");
  int64_t maxSrc = *std::max_element(g.src.begin(), g.src.end());
  int64_t maxDst = *std::max_element(g.dst.begin(), g.dst.end());
  EXPECT_LT(maxDst, 40);
  EXPECT_GT(maxSrc, 40); // sources use their whole range
  GraphOrError again = loadGraph("bipartite:src=300,dst=40,edges=5000,seed=3");
  EXPECT_EQ(again.graph.src, g.src);
  EXPECT_EQ(again.graph.dst, g.dst);
  // A graph of one node set has both sides.
  HostGraph plain = generatePowerLaw(10, 20, 1);
  EXPECT_FALSE(plain.bipartite());
  EXPECT_EQ(plain.srcNodes(), 10);
  EXPECT_EQ(plain.dstNodes(), 10);
  // Validation: ids against their own side, sides consistent.
  HostGraph bad = g;
  bad.dst[7] = 40;
  EXPECT_EQ(bad.validate(), "edge 7 (" + std::to_string(bad.src[7]) +
                                " -> 40) has a node id outside [0, 300) -> "
                                "[0, 40)");
  bad = g;
  bad.numNodes = 40;
  EXPECT_NE(bad.validate().find("must both be set, with 40 nodes the larger"),
            std::string::npos);
  EXPECT_NE(loadGraph("bipartite:src=5,edges=3").error.find("dst"),
            std::string::npos);
}

TEST(HostGraph, TypedGraphs) {
  // relations=R on any generator: ids uniform in [0, R), seeded, every
  // relation drawn on a graph this size.
  GraphOrError r = loadGraph("powerlaw:nodes=200,edges=3000,relations=4,seed=2");
  ASSERT_TRUE(r.ok()) << r.error;
  const HostGraph &g = r.graph;
  EXPECT_TRUE(g.typed());
  ASSERT_EQ(g.edgeTypes.size(), 3000u);
  EXPECT_EQ(g.numRelations(), 4);
  EXPECT_EQ(*std::min_element(g.edgeTypes.begin(), g.edgeTypes.end()), 0);
  EXPECT_EQ(loadGraph("powerlaw:nodes=200,edges=3000,relations=4,seed=2")
                .graph.edgeTypes,
            g.edgeTypes);
  EXPECT_TRUE(loadGraph("batch:graphs=20,relations=2").graph.typed());
  EXPECT_TRUE(loadGraph("bipartite:src=5,dst=3,edges=9,relations=2").graph.typed());
  // An empty typed graph is typed; an untyped one is not.
  HostGraph empty = loadGraph("powerlaw:nodes=0,edges=0,relations=3").graph;
  EXPECT_TRUE(empty.typed());
  EXPECT_EQ(empty.numRelations(), 0);
  EXPECT_FALSE(loadGraph("powerlaw:nodes=20,edges=30").graph.typed());
  // Renumbering keeps each edge's relation.
  std::vector<int64_t> order(200);
  std::iota(order.rbegin(), order.rend(), 0);
  EXPECT_EQ(renumberNodes(g, order).edgeTypes, g.edgeTypes);
  // Validation and bad counts.
  HostGraph bad = g;
  bad.edgeTypes[11] = -2;
  EXPECT_EQ(bad.validate(), "edge 11 has the negative relation id -2");
  bad.edgeTypes.pop_back();
  EXPECT_NE(bad.validate().find("edge type list has 2999 entries"),
            std::string::npos);
  bad = g;
  bad.edgeTypes.clear();
  bad.typedEmpty = true;
  EXPECT_EQ(bad.validate(), "a typed graph with edges needs an edge type per edge");
  for (const char *spec : {"powerlaw:nodes=9,edges=9,relations=0",
                           "powerlaw:nodes=9,edges=9,relations=1.5",
                           "batch:graphs=2,relations=3000000000"})
    EXPECT_NE(loadGraph(spec).error.find("expected relations to be an integer"),
              std::string::npos)
        << spec;
}

TEST(HostGraph, StatisticsByHand) {
  // 5 nodes; in-degrees 3 (node 0), 1, 2, 0, 0; node 4 isolated.
  HostGraph g;
  g.numNodes = 5;
  g.src = {1, 2, 3, 0, 0, 3};
  g.dst = {0, 0, 0, 1, 2, 2};
  GraphStats s = computeStats(g);
  EXPECT_EQ(s.nodes, 5);
  EXPECT_EQ(s.edges, 6);
  EXPECT_EQ(s.maxInDegree, 3);
  EXPECT_EQ(s.maxOutDegree, 2);
  EXPECT_EQ(s.p50, 1);  // sorted 0 0 1 2 3, rank ceil(2.5) - 1 = 2
  EXPECT_EQ(s.p90, 3);
  EXPECT_EQ(s.isolatedNodes, 1);
  EXPECT_EQ(s.rowsByDegree[0], 3); // degrees 0, 0, 1
  EXPECT_EQ(s.rowsByDegree[1], 1); // 2
  EXPECT_EQ(s.rowsByDegree[2], 1); // 3
  EXPECT_EQ(s.edgesByDegree[2], 3);
  EXPECT_EQ(s.rowsAbove(2), 1);
  EXPECT_TRUE(s.csrOrder) << "sorted by destination";
  EXPECT_TRUE(s.directed);
  EXPECT_EQ(s.check(), "");
  std::swap(g.src[0], g.src[1]); // (2,0) before (1,0): a row in edge order
  EXPECT_TRUE(computeStats(g).csrOrder);
  std::swap(g.dst[2], g.dst[3]); // (3,1) before (0,0): not CSR order
  EXPECT_FALSE(computeStats(g).csrOrder);
  std::swap(g.dst[2], g.dst[3]);
  // Symmetric: every edge has its reverse, self-loops are their own.
  g.src = {0, 1, 2, 2};
  g.dst = {1, 0, 2, 2};
  EXPECT_FALSE(computeStats(g).directed);
  EXPECT_EQ(computeStats(g).selfLoops, 2);
  g.src = {0, 1, 1};
  g.dst = {1, 0, 0}; // the reverse of (1,0) appears once, not twice
  EXPECT_TRUE(computeStats(g).directed);
}

TEST(HostGraph, BatchOfSmallGraphs) {
  GraphOrError r = loadGraph("batch:graphs=50,min=5,max=9,degree=2.5,seed=1");
  ASSERT_TRUE(r.ok()) << r.error;
  const HostGraph &g = r.graph;
  EXPECT_EQ(g.validate(), "");
  EXPECT_EQ(g.numGraphs(), 50);
  GraphStats s = computeStats(g);
  EXPECT_LE(s.largestGraph, 9);
  EXPECT_GE(s.smallestGraph, 5);
  EXPECT_LE(s.smallestGraph, s.largestGraph);
  EXPECT_FALSE(s.directed) << "both directions are stored";
  EXPECT_EQ(s.check(), "");
  EXPECT_GE(g.numNodes, 50 * 5);
  EXPECT_LE(g.numNodes, 50 * 9);
  EXPECT_EQ(s.isolatedNodes, 0) << "every small graph is connected";
  EXPECT_EQ(g.numEdges() % 2, 0) << "both directions are stored";
}

/// Everything loadGraph reads of a graph but its name.
void expectSameGraph(const HostGraph &a, const HostGraph &b) {
  EXPECT_EQ(a.numNodes, b.numNodes);
  EXPECT_EQ(a.numSrc, b.numSrc);
  EXPECT_EQ(a.numDst, b.numDst);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.graphIds, b.graphIds);
  EXPECT_EQ(a.edgeTypes, b.edgeTypes);
  EXPECT_EQ(a.typed(), b.typed());
}

TEST(HostGraph, DatasetFolderRoundTrip) {
  TempDir dir;
  for (const char *spec :
       {"powerlaw:nodes=40,edges=200,seed=3",
        "batch:graphs=9,min=3,max=6,seed=2",
        "batch:graphs=4,relations=2",
        "bipartite:src=30,dst=12,edges=150",
        "bipartite:src=5,dst=17,edges=60,relations=4",
        "powerlaw:nodes=6,edges=0,relations=3",
        "bipartite:src=0,dst=0,edges=0"}) {
    SCOPED_TRACE(spec);
    GraphOrError made = loadGraph(spec);
    ASSERT_TRUE(made.ok()) << made.error;
    // One folder for all: a dump removes what an earlier one left.
    std::string folder = (dir.path / "set").string();
    ASSERT_EQ(writeDatasetDir(folder, made.graph), "");
    GraphOrError back = loadGraph(folder);
    ASSERT_TRUE(back.ok()) << back.error;
    expectSameGraph(made.graph, back.graph);
  }
}

TEST(HostGraph, EdgeListsRefuseWhatTheyCannotHold) {
  TempDir dir;
  std::string path = (dir.path / "g.edges").string();
  GraphOrError typed = loadGraph("bipartite:src=5,dst=7,edges=20,relations=2");
  ASSERT_TRUE(typed.ok()) << typed.error;
  EXPECT_EQ(edgeListOmissions(typed.graph),
            "bipartite split (5 source and 7 destination nodes) and relation "
            "ids (2 relations)");
  EXPECT_NE(writeEdgeList(path, typed.graph).find("has no room for"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(path));
  GraphOrError batch = loadGraph("batch:graphs=3");
  ASSERT_TRUE(batch.ok()) << batch.error;
  EXPECT_EQ(edgeListOmissions(batch.graph),
            "graph ids (a batch of 3 small graphs)");
  GraphOrError plain = loadGraph("powerlaw:nodes=10,edges=30");
  ASSERT_TRUE(plain.ok()) << plain.error;
  EXPECT_EQ(edgeListOmissions(plain.graph), "");
  ASSERT_EQ(writeEdgeList(path, plain.graph), "");
  GraphOrError back = loadGraph(path);
  ASSERT_TRUE(back.ok()) << back.error;
  expectSameGraph(plain.graph, back.graph);
}

TEST(HostGraph, DatasetFolderSidesAndTypesChecked) {
  TempDir dir;
  writeText(dir.path / "meta.txt", "nodes 4\ndst_nodes 4\n");
  writeGz(dir.path / "edges.txt.gz", "0 1\n1 2\n");
  EXPECT_NE(loadGraph(dir.path.string())
                .error.find("needs both 'src_nodes' and 'dst_nodes'"),
            std::string::npos);
  writeText(dir.path / "meta.txt", "nodes 4\nsrc_nodes 2\ndst_nodes 3\n");
  EXPECT_NE(loadGraph(dir.path.string())
                .error.find("expected 'nodes' to be the larger of "
                            "'src_nodes' (2) and 'dst_nodes' (3) but found 4"),
            std::string::npos);
  writeText(dir.path / "meta.txt", "nodes 3\nsrc_nodes 2\ndst_nodes x\n");
  EXPECT_NE(loadGraph(dir.path.string())
                .error.find("expected a nonnegative 'dst_nodes' count"),
            std::string::npos);
  // Sources below src_nodes, destinations below dst_nodes.
  writeText(dir.path / "meta.txt", "nodes 3\nsrc_nodes 2\ndst_nodes 3\n");
  writeGz(dir.path / "edges.txt.gz", "0 1\n2 0\n");
  EXPECT_NE(loadGraph(dir.path.string()).error.find("outside [0, 2) -> [0, 3)"),
            std::string::npos);
  writeText(dir.path / "meta.txt", "nodes 3\n");
  writeGz(dir.path / "edge_types.txt.gz", "0\n1\n2\n");
  EXPECT_NE(loadGraph(dir.path.string())
                .error.find("more relation ids than the 2 edges"),
            std::string::npos);
  writeGz(dir.path / "edge_types.txt.gz", "0\n-1\n");
  EXPECT_NE(loadGraph(dir.path.string()).error.find("negative relation id"),
            std::string::npos);
  writeGz(dir.path / "edge_types.txt.gz", "1\n0\n");
  GraphOrError ok = loadGraph(dir.path.string());
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_EQ(ok.graph.edgeTypes, (std::vector<int64_t>{1, 0}));
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

/// Writes a version 1 `.npy` file with the given header fields and payload,
/// as NumPy does (header padded to a multiple of 64 bytes).
void writeNpyFile(const fs::path &p, const std::string &descr,
                  const std::string &shape, const std::string &payload,
                  bool fortranOrder = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " +
                       (fortranOrder ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header.push_back('\n');
  std::ofstream os(p, std::ios::binary);
  os.write("\x93NUMPY\x01\x00", 8);
  os.put(static_cast<char>(header.size() & 0xff))
      .put(static_cast<char>(header.size() >> 8));
  os << header << payload;
}

/// The bytes of `values` (little-endian on the hosts gnnc runs on).
template <typename T> std::string bytesOf(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

/// Loads `p` and checks it is the three edges 0->1, 1->2, 4->0 on 5 nodes.
void expectThreeEdges(const fs::path &p) {
  GraphOrError r = loadGraph(p.string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numNodes, 5);
  EXPECT_EQ(r.graph.src, (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(r.graph.dst, (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(r.graph.name, p.filename().string());
}

/// The error of loading `p`, which must fail.
std::string npyError(const fs::path &p) {
  GraphOrError r = loadGraph(p.string());
  EXPECT_FALSE(r.ok()) << p;
  return r.error;
}

TEST(HostGraph, NpyEdgeRows) {
  TempDir dir;
  writeNpyFile(dir.path / "i8.npy", "<i8", "(3, 2)",
               bytesOf<int64_t>({0, 1, 1, 2, 4, 0}));
  expectThreeEdges(dir.path / "i8.npy");
  writeNpyFile(dir.path / "i4.npy", "<i4", "(3, 2)",
               bytesOf<int32_t>({0, 1, 1, 2, 4, 0}));
  expectThreeEdges(dir.path / "i4.npy");
}

TEST(HostGraph, NpyEdgeIndex) {
  TempDir dir;
  writeNpyFile(dir.path / "i8.npy", "<i8", "(2, 3)",
               bytesOf<int64_t>({0, 1, 4, 1, 2, 0}));
  expectThreeEdges(dir.path / "i8.npy");
  writeNpyFile(dir.path / "i4.npy", "|i4", "(2, 3)",
               bytesOf<int32_t>({0, 1, 4, 1, 2, 0}));
  expectThreeEdges(dir.path / "i4.npy");
}

TEST(HostGraph, NpyFortranOrder) {
  // np.save of edge_index.T: shape (E, 2) in Fortran order, so the file
  // holds the sources, then the destinations.
  TempDir dir;
  writeNpyFile(dir.path / "rows.npy", "<i8", "(3, 2)",
               bytesOf<int64_t>({0, 1, 4, 1, 2, 0}), /*fortranOrder=*/true);
  expectThreeEdges(dir.path / "rows.npy");
  writeNpyFile(dir.path / "index.npy", "<i4", "(2, 3)",
               bytesOf<int32_t>({0, 1, 1, 2, 4, 0}), /*fortranOrder=*/true);
  expectThreeEdges(dir.path / "index.npy");
}

TEST(HostGraph, NpySquareArrayIsRefused) {
  // [E, 2] (0 -> 1, 2 -> 3) or [2, E] (0 -> 2, 1 -> 3): two graphs, and
  // nothing in the file says which.
  TempDir dir;
  for (bool fortran : {false, true}) {
    writeNpyFile(dir.path / "g.npy", "<i8", "(2, 2)",
                 bytesOf<int64_t>({0, 1, 2, 3}), fortran);
    EXPECT_NE(npyError(dir.path / "g.npy")
                  .find("g.npy': shape [2, 2] is ambiguous: it may hold two "
                        "edges as rows ([E, 2]) or the sources then the "
                        "destinations ([2, E]"),
              std::string::npos);
  }
}

TEST(HostGraph, EdgeListWrittenReadsBackExactly) {
  // Two edges (no .npy form) and an isolated last node (none in a .npy).
  TempDir dir;
  HostGraph g;
  g.numNodes = 5;
  g.src = {1, 0};
  g.dst = {3, 2};
  ASSERT_EQ(writeEdgeList((dir.path / "g.edges").string(), g), "");
  GraphOrError r = loadGraph((dir.path / "g.edges").string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numNodes, 5);
  EXPECT_EQ(r.graph.src, g.src);
  EXPECT_EQ(r.graph.dst, g.dst);
}

TEST(HostGraph, NpyEmpty) {
  TempDir dir;
  writeNpyFile(dir.path / "rows.npy", "<i8", "(0, 2)", "");
  writeNpyFile(dir.path / "index.npy", "<i4", "(2, 0)", "");
  for (const char *name : {"rows.npy", "index.npy"}) {
    GraphOrError r = loadGraph((dir.path / name).string());
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.graph.numNodes, 0);
    EXPECT_EQ(r.graph.numEdges(), 0);
  }
}

TEST(HostGraph, NpyLargeIds) {
  // 64-bit ids are kept as they are; the node count is 1 + the largest. A
  // graph of 3e9 nodes needs 144 GB of host memory: where the machine has
  // less, it is refused before it is built, naming nodes, edges and bytes.
  TempDir dir;
  writeNpyFile(dir.path / "g.npy", "<i8", "(1, 2)",
               bytesOf<int64_t>({3000000000, 0}));
  GraphOrError r = loadGraph((dir.path / "g.npy").string());
  if (hostMemoryBytes() >= graphHostBytes(3000000001, 1)) {
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.graph.numNodes, 3000000001);
    EXPECT_EQ(r.graph.src, (std::vector<int64_t>{3000000000}));
  } else {
    EXPECT_NE(r.error.find("a graph of 3000000001 nodes and 1 edges needs "
                           "144000000080 bytes of host memory but this "
                           "machine has "),
              std::string::npos)
        << r.error;
  }
  writeNpyFile(dir.path / "max.npy", "<i8", "(1, 2)",
               bytesOf<int64_t>({0, std::numeric_limits<int64_t>::max()}));
  EXPECT_NE(npyError(dir.path / "max.npy")
                .find("node id 9223372036854775807 is too large"),
            std::string::npos);
}

TEST(HostGraph, HostMemoryCap) {
  // The fuzzers cap the memory a loader may plan for below their own limit.
  setHostMemoryCap(1 << 20);
  EXPECT_EQ(hostMemoryBytes(), 1 << 20);
  GraphOrError r = loadGraph("powerlaw:nodes=100000,edges=1");
  EXPECT_NE(r.error.find("needs 4800032 bytes of host memory but this "
                         "machine has 1048576"),
            std::string::npos)
      << r.error;
  setHostMemoryCap(0);
  EXPECT_GT(hostMemoryBytes(), 1 << 20);
  EXPECT_TRUE(loadGraph("powerlaw:nodes=100000,edges=1").ok());
}

TEST(HostGraph, SizeLimits) {
  EXPECT_EQ(graphHostBytes(10, 2), 10 * 48 + 2 * 32);
  EXPECT_EQ(graphHostBytes(int64_t(1) << 60, 1), -1);
  EXPECT_EQ(graphHostBytes(-1, 1), -1);
  EXPECT_GT(hostMemoryBytes(), 0);
  EXPECT_EQ(checkGraphSize("g", 2708, 10556), "");
  EXPECT_EQ(checkGraphSize("g", int64_t(1) << 60, 1),
            "g: a graph of 1152921504606846976 nodes and 1 edges needs more "
            "than 2^63 bytes of host memory but this machine has " +
                std::to_string(hostMemoryBytes()));
  // Generators are refused before anything is allocated.
  GraphOrError r = loadGraph("powerlaw:nodes=99999999999999,edges=1");
  EXPECT_NE(r.error.find("'powerlaw:nodes=99999999999999,edges=1': a graph "
                         "of 99999999999999 nodes and 1 edges needs "
                         "4799999999999984 bytes"),
            std::string::npos)
      << r.error;
  r = loadGraph("powerlaw:nodes=1e30,edges=1");
  EXPECT_NE(r.error.find("1e+30 nodes and 1 edges are beyond 2^62"),
            std::string::npos)
      << r.error;
  r = loadGraph("batch:graphs=1e12");
  EXPECT_NE(r.error.find("bytes of host memory"), std::string::npos)
      << r.error;
}

TEST(HostGraph, DeclaredNodeCounts) {
  TempDir dir;
  std::ofstream(dir.path / "neg.edges") << "# nodes -5\n0 1\n";
  GraphOrError r = loadGraph((dir.path / "neg.edges").string());
  EXPECT_NE(r.error.find("neg.edges:1: expected '# nodes N' with a "
                         "nonnegative N but found '# nodes -5'"),
            std::string::npos)
      << r.error;
  std::ofstream(dir.path / "huge.edges") << "# nodes 5000000000\n0 1\n";
  r = loadGraph((dir.path / "huge.edges").string());
  if (hostMemoryBytes() < graphHostBytes(5000000000, 1))
    EXPECT_NE(r.error.find("huge.edges: a graph of 5000000000 nodes and 1 "
                           "edges needs 240000000032 bytes"),
              std::string::npos)
        << r.error;
}

TEST(HostGraph, NpyAcrossReadBlocks) {
  // More ids than one read block (2^23), with the sources ending inside the
  // first block: every id must land in its place.
  TempDir dir;
  const int32_t numEdges = (1 << 22) + 5;
  std::vector<int32_t> ids(2 * static_cast<size_t>(numEdges));
  for (int32_t e = 0; e < numEdges; ++e) {
    ids[e] = e;
    ids[numEdges + e] = (e * 7 + 3) % numEdges;
  }
  writeNpyFile(dir.path / "g.npy", "<i4",
               "(2, " + std::to_string(numEdges) + ")", bytesOf(ids));
  GraphOrError r = loadGraph((dir.path / "g.npy").string());
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.graph.numEdges(), numEdges);
  EXPECT_EQ(r.graph.numNodes, numEdges);
  int64_t wrong = 0;
  for (int32_t e = 0; e < numEdges; ++e)
    wrong += r.graph.src[e] != e || r.graph.dst[e] != (e * 7 + 3) % numEdges;
  EXPECT_EQ(wrong, 0);
}

TEST(HostGraph, NpyDatasetFolder) {
  // A data-set folder may hold edges.npy; meta.txt gives the node count.
  TempDir dir;
  writeText(dir.path / "meta.txt", "nodes 7\nedges 3\n");
  writeNpyFile(dir.path / "edges.npy", "<i8", "(2, 3)",
               bytesOf<int64_t>({0, 1, 4, 1, 2, 0}));
  GraphOrError r = loadGraph(dir.path.string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numNodes, 7);
  EXPECT_EQ(r.graph.dst, (std::vector<int64_t>{1, 2, 0}));
  writeText(dir.path / "meta.txt", "nodes 7\nedges 4\n");
  EXPECT_NE(loadGraph(dir.path.string())
                .error.find("edges.npy: meta.txt declares 4 edges but the "
                            "file has 3"),
            std::string::npos);
}

TEST(HostGraph, NpyKnownByMagic) {
  TempDir dir;
  writeNpyFile(dir.path / "g.edges", "<i4", "(3, 2)",
               bytesOf<int32_t>({0, 1, 1, 2, 4, 0}));
  expectThreeEdges(dir.path / "g.edges");
}

TEST(HostGraph, NpyPayloadSize) {
  TempDir dir;
  writeNpyFile(dir.path / "short.npy", "<i8", "(3, 2)",
               bytesOf<int64_t>({0, 1, 1, 2, 4}));
  EXPECT_NE(npyError(dir.path / "short.npy")
                .find("short.npy': expected 48 payload bytes for shape [3, 2] "
                      "of int64 but found 40"),
            std::string::npos);
  writeNpyFile(dir.path / "long.npy", "<i4", "(2, 1)",
               bytesOf<int32_t>({0, 1, 2}));
  EXPECT_NE(npyError(dir.path / "long.npy")
                .find("expected 8 payload bytes for shape [2, 1] of int32 but "
                      "found 12"),
            std::string::npos);
}

TEST(HostGraph, NpyBadHeader) {
  TempDir dir;
  // The header claims more bytes than the file has.
  writeText(dir.path / "header.npy",
            std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18));
  EXPECT_NE(npyError(dir.path / "header.npy").find("truncated header"),
            std::string::npos);
  writeText(dir.path / "text.npy", "0 1\n1 2\n");
  EXPECT_NE(npyError(dir.path / "text.npy").find("is not a .npy file"),
            std::string::npos);
  writeNpyFile(dir.path / "shape.npy", "<i8", "(2, x)", "");
  EXPECT_NE(npyError(dir.path / "shape.npy").find("malformed shape in header"),
            std::string::npos);
}

TEST(HostGraph, NpyWrongDtype) {
  TempDir dir;
  writeNpyFile(dir.path / "f4.npy", "<f4", "(3, 2)",
               bytesOf<float>({0, 1, 1, 2, 4, 0}));
  EXPECT_NE(npyError(dir.path / "f4.npy")
                .find("expected int32 or int64 node ids ('<i4' or '<i8') but "
                      "found float32 ('<f4')"),
            std::string::npos);
  writeNpyFile(dir.path / "u8.npy", "<u8", "(1, 2)", bytesOf<uint64_t>({0, 1}));
  EXPECT_NE(npyError(dir.path / "u8.npy").find("but found uint64 ('<u8')"),
            std::string::npos);
  writeNpyFile(dir.path / "big.npy", ">i8", "(1, 2)", std::string(16, '\0'));
  EXPECT_NE(npyError(dir.path / "big.npy")
                .find("expected little-endian node ids but the dtype is '>i8' "
                      "(big-endian)"),
            std::string::npos);
}

TEST(HostGraph, NpyWrongShape) {
  TempDir dir;
  writeNpyFile(dir.path / "flat.npy", "<i8", "(6,)",
               bytesOf<int64_t>({0, 1, 1, 2, 4, 0}));
  EXPECT_NE(npyError(dir.path / "flat.npy")
                .find("expected shape [E, 2] or [2, E] but found [6]"),
            std::string::npos);
  writeNpyFile(dir.path / "square.npy", "<i4", "(3, 3)",
               bytesOf<int32_t>({0, 1, 2, 0, 1, 2, 0, 1, 2}));
  EXPECT_NE(npyError(dir.path / "square.npy").find("but found [3, 3]"),
            std::string::npos);
  writeNpyFile(dir.path / "rank3.npy", "<i4", "(1, 2, 1)",
               bytesOf<int32_t>({0, 1}));
  EXPECT_NE(npyError(dir.path / "rank3.npy").find("but found [1, 2, 1]"),
            std::string::npos);
}

TEST(HostGraph, NpyNegativeId) {
  TempDir dir;
  writeNpyFile(dir.path / "g.npy", "<i4", "(3, 2)",
               bytesOf<int32_t>({0, 1, -1, 2, 1, 1}));
  EXPECT_NE(npyError(dir.path / "g.npy")
                .find("g.npy: edge 1 (-1 -> 2) has a node id outside [0, 3)"),
            std::string::npos);
}

TEST(HostGraph, DatasetFoundFromBelow) {
  // The upward search for shared/datasets went on only while every
  // candidate on the way existed (the std::error_code of a missing one ended
  // it): from three folders below, the data set was not found.
  TempDir dir;
  fs::path set = dir.path / "shared" / "datasets" / "tiny";
  fs::create_directories(set);
  writeText(set / "meta.txt", "nodes 3\n");
  writeGz(set / "edges.txt.gz", "0 1\n1 2\n");
  fs::path below = dir.path / "a" / "b" / "c";
  fs::create_directories(below);
  std::string saved = std::getenv("GNNC_DATASETS") ? std::getenv("GNNC_DATASETS") : "";
  bool hadEnv = std::getenv("GNNC_DATASETS") != nullptr;
  ::unsetenv("GNNC_DATASETS");
  fs::path cwd = fs::current_path();
  fs::current_path(below);
  GraphOrError r = loadGraph("tiny");
  fs::current_path(cwd);
  if (hadEnv)
    ::setenv("GNNC_DATASETS", saved.c_str(), 1);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numEdges(), 2);
}

TEST(HostGraph, DatasetEntriesThatCannotBeRead) {
  TempDir dir;
  fs::path set = dir.path / "set";
  fs::create_directories(set);
  writeText(set / "meta.txt", "nodes 3\n");
  writeGz(set / "edges.txt.gz", "0 1\n1 2\n");
  // A folder where a file is expected, a FIFO: refused, not opened.
  fs::create_directories(set / "graph_ids.txt.gz");
  EXPECT_EQ(loadGraph(set.string()).error,
            "'" + (set / "graph_ids.txt.gz").string() +
                "' is a folder, not a regular file");
  fs::remove(set / "graph_ids.txt.gz");
  ASSERT_EQ(::mkfifo((set / "graph_ids.txt.gz").c_str(), 0600), 0);
  EXPECT_EQ(loadGraph(set.string()).error,
            "'" + (set / "graph_ids.txt.gz").string() +
                "' is a FIFO, not a regular file");
  fs::remove(set / "graph_ids.txt.gz");
  ASSERT_TRUE(loadGraph(set.string()).ok());
  // A folder that cannot be searched (not for root, who may search any).
  if (::geteuid() == 0)
    return;
  fs::permissions(set, fs::perms::none);
  GraphOrError r = loadGraph(set.string());
  fs::permissions(set, fs::perms::owner_all);
  EXPECT_EQ(r.error, "'" + (set / "meta.txt").string() + "': Permission denied");
}

TEST(HostGraph, DeclaredCountsBoundTheReading) {
  TempDir dir;
  // More graph ids than nodes: refused at the first one too many.
  writeText(dir.path / "meta.txt", "nodes 2\n");
  writeGz(dir.path / "edges.txt.gz", "0 1\n");
  writeGz(dir.path / "graph_ids.txt.gz", "0\n0\n0\n0\n");
  EXPECT_EQ(loadGraph(dir.path.string()).error,
            (dir.path / "graph_ids.txt.gz").string() +
                ":3: more graph ids than the 2 nodes of the graph");
  // An edge count that is not a count.
  writeText(dir.path / "meta.txt", "nodes 2\nedges 1x\n");
  EXPECT_EQ(loadGraph(dir.path.string()).error,
            (dir.path / "meta.txt").string() +
                ": expected a nonnegative edge count but found '1x'");
  // A declared edge count too large for memory: refused before reading.
  writeText(dir.path / "meta.txt", "nodes 2\nedges 4611686018427387904\n");
  EXPECT_NE(loadGraph(dir.path.string())
                .error.find("a graph of 2 nodes and 4611686018427387904 edges "
                            "needs more than 2^63 bytes of host memory"),
            std::string::npos);
}

TEST(HostGraph, TextIsBoundedAsItIsRead) {
  TempDir dir;
  // 16 MiB of blank lines and comments are allowed, then 128 bytes per edge
  // (uncompressed text takes the same path as gzip).
  std::string text = "0 1\n" + std::string(size_t(1) << 24, '\n');
  writeText(dir.path / "ok.txt", text + "1 2\n");
  GraphOrError r = loadGraph((dir.path / "ok.txt").string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numEdges(), 2);
  writeText(dir.path / "bomb.txt", text + std::string(200, '\n') + "1 2\n");
  EXPECT_EQ(loadGraph((dir.path / "bomb.txt").string()).error,
            (dir.path / "bomb.txt").string() +
                ":16777342: refused after 16777345 bytes of text "
                "(decompressed) for 2 nodes and 1 edges: a list of edges may "
                "hold 128 bytes per edge and 16777216 bytes of comments and "
                "blank lines");
  // A truncated gzip stream is a read error, not a shorter graph.
  std::string gz;
  {
    writeGz(dir.path / "whole.gz", "0 1\n1 2\n2 3\n");
    std::ifstream is(dir.path / "whole.gz", std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(is), {});
  }
  writeText(dir.path / "cut.gz", gz.substr(0, gz.size() - 6));
  EXPECT_NE(loadGraph((dir.path / "cut.gz").string())
                .error.find("cannot read '" + (dir.path / "cut.gz").string() +
                            "': "),
            std::string::npos);
}

/// The bytes of `text` gzip-compressed (one member).
std::string gzipped(const TempDir &dir, const std::string &text) {
  writeGz(dir.path / "member.gz", text);
  std::ifstream is(dir.path / "member.gz", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), {});
}

TEST(HostGraph, GzipMembersAndTrailingBytes) {
  // What `gzip -t` accepts without a warning is read: concatenated members
  // (all of them), zero padding after the last. zlib's gzread ignored any
  // trailing garbage, and a truncated member after it, without a word.
  TempDir dir;
  std::string one = gzipped(dir, "0 1\n"), two = gzipped(dir, "1 2\n");
  auto load = [&](const std::string &name, const std::string &bytes) {
    writeText(dir.path / name, bytes);
    return loadGraph((dir.path / name).string());
  };
  GraphOrError r = load("cat.gz", one + two);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.src, (std::vector<int64_t>{0, 1}));
  r = load("padded.gz", one + std::string(10, '\0'));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numEdges(), 1);
  // Members larger than the reader's blocks, decoded across reads.
  std::string big, bigText;
  for (int e = 0; e < 100000; ++e)
    bigText += std::to_string(e) + " " + std::to_string(e + 1) + "\n";
  big = gzipped(dir, bigText);
  r = load("big.gz", big + one + big);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.graph.numEdges(), 200001);
  EXPECT_EQ(r.graph.src[100000], 0);
  EXPECT_EQ(r.graph.dst[200000], 100000);

  std::string at = std::to_string(one.size());
  std::string path = (dir.path / "garbage.gz").string();
  EXPECT_EQ(load("garbage.gz", one + "garbage\n").error,
            "cannot read '" + path + "': trailing garbage at byte " + at +
                " after the gzip data (neither another gzip member nor zero "
                "padding; the first nonzero byte is at byte " + at + ")");
  path = (dir.path / "zeros-then-x.gz").string();
  EXPECT_EQ(load("zeros-then-x.gz", one + std::string(5, '\0') + "x").error,
            "cannot read '" + path + "': trailing garbage at byte " + at +
                " after the gzip data (neither another gzip member nor zero "
                "padding; the first nonzero byte is at byte " +
                std::to_string(one.size() + 5) + ")");
  // gzip -t warns of a member after zero padding too (and ignores it).
  EXPECT_NE(load("zeros-then-member.gz", one + std::string(5, '\0') + two)
                .error.find("trailing garbage at byte " + at + " "),
            std::string::npos);
  // A lone first magic byte is a truncated member, as for gzip.
  path = (dir.path / "magic.gz").string();
  EXPECT_EQ(load("magic.gz", one + "\x1f").error,
            "cannot read '" + path + "': unexpected end of file");
  // Damaged data in the second member: zlib's reason and where the member
  // starts.
  std::string damaged = two;
  damaged[damaged.size() - 5] ^= 0x55; // the length in the trailer
  EXPECT_NE(load("damaged.gz", one + damaged)
                .error.find("(in the gzip member at byte " + at + ")"),
            std::string::npos);
  // In a data-set folder's files too.
  fs::create_directories(dir.path / "set");
  writeText(dir.path / "set" / "meta.txt", "nodes 3\n");
  writeText(dir.path / "set" / "edges.txt.gz", one + "x");
  EXPECT_NE(loadGraph((dir.path / "set").string())
                .error.find("edges.txt.gz': trailing garbage at byte " + at),
            std::string::npos);
}

TEST(HostGraph, RepeatedKeysAreRefused) {
  // The last value won before: `nodes 3` then `nodes 4` was a graph of 4.
  TempDir dir;
  writeGz(dir.path / "edges.txt.gz", "0 1\n1 2\n");
  std::string meta = (dir.path / "meta.txt").string();
  writeText(meta, "nodes 3\nedges 2\n\nnodes 4\n");
  EXPECT_EQ(loadGraph(dir.path.string()).error,
            meta + ":4: key 'nodes' is repeated (first on line 1); each key "
                   "may appear once");
  // The same value twice too, any key.
  writeText(meta, "nodes 3\nedges 2\nedges 2\n");
  EXPECT_EQ(loadGraph(dir.path.string()).error,
            meta + ":3: key 'edges' is repeated (first on line 2); each key "
                   "may appear once");
  writeText(meta, "nodes 3\nedges 2\n");
  ASSERT_TRUE(loadGraph(dir.path.string()).ok());

  std::string list = (dir.path / "g.txt").string();
  writeText(list, "# nodes 3\n0 1\n#nodes 5\n1 2\n");
  EXPECT_EQ(loadGraph(list).error,
            list + ":3: '# nodes' is repeated (first on line 1); an edge "
                   "list declares its node count once");
  // Other comments are free text.
  writeText(list, "# nodes 3\n# nodes are numbered from 0\n0 1\n");
  EXPECT_NE(loadGraph(list).error.find(":2: expected '# nodes N'"),
            std::string::npos);
  writeText(list, "# nodes 3\n# edges of a path\n0 1\n");
  EXPECT_TRUE(loadGraph(list).ok());
}

TEST(HostGraph, LocalityOrders) {
  EXPECT_EQ(parseNodeOrder("rcm"), NodeOrder::ReverseCuthillMcKee);
  EXPECT_EQ(parseNodeOrder("degree"), NodeOrder::Degree);
  EXPECT_FALSE(parseNodeOrder("metis").has_value());
  // A star 0 <- {1, 2, 3} with a self-loop on 3, a duplicate 1 -> 0 and an
  // isolated node 4; a separate edge 5 - 6.
  std::vector<int64_t> src = {1, 2, 3, 3, 1, 6};
  std::vector<int64_t> dst = {0, 0, 0, 3, 0, 5};
  // Degrees (simple, undirected): 0:3, 1..3:1, 4:0, 5:1, 6:1. Components by
  // their least (degree, id) node: {4}, {0..3} from 1, {5, 6} from 5.
  // Cuthill-McKee: 4 | 1 0 2 3 | 5 6, reversed.
  EXPECT_EQ(localityOrder(7, src.data(), dst.data(), 6,
                          NodeOrder::ReverseCuthillMcKee),
            (std::vector<int64_t>{6, 5, 3, 2, 0, 1, 4}));
  // Degree, loops (twice) and duplicates counted: 0:4, 3:3, 1:2, 2:1, 5:1,
  // 6:1, 4:0.
  EXPECT_EQ(localityOrder(7, src.data(), dst.data(), 6, NodeOrder::Degree),
            (std::vector<int64_t>{0, 3, 1, 2, 5, 6, 4}));
  EXPECT_TRUE(
      localityOrder(0, nullptr, nullptr, 0, NodeOrder::ReverseCuthillMcKee)
          .empty());
  // A shuffled path: bandwidth 1 after renumbering, the edges in order.
  HostGraph path;
  path.numNodes = 9;
  std::vector<int64_t> p = {4, 7, 0, 8, 2, 5, 1, 6, 3};
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    path.src.push_back(p[i]);
    path.dst.push_back(p[i + 1]);
  }
  std::vector<int64_t> order =
      localityOrder(9, path.src.data(), path.dst.data(), path.numEdges(),
                    NodeOrder::ReverseCuthillMcKee);
  HostGraph renumbered = renumberNodes(path, order);
  ASSERT_EQ(renumbered.numEdges(), path.numEdges());
  EXPECT_EQ(renumbered.validate(), "");
  for (int64_t e = 0; e < renumbered.numEdges(); ++e) {
    EXPECT_EQ(std::abs(renumbered.src[e] - renumbered.dst[e]), 1);
    EXPECT_EQ(order[renumbered.src[e]], path.src[e]);
    EXPECT_EQ(order[renumbered.dst[e]], path.dst[e]);
  }
}

} // namespace
