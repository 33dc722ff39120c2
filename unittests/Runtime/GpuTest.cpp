//===- GpuTest.cpp - the runtime on a GPU ---------------------------------===//
//
// Part of gnnc. Every test skips (not fails) without a CUDA device. Graphs are
// compared against a straightforward CPU construction; the hand-written
// Program against a CPU computation in double precision.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilders.h"
#include "gnn/Graph/HostGraph.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/DeviceBytes.h"
#include "gnn/Runtime/Environment.h"
#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/Graph.h"
#include "gnn/Runtime/Library.h"
#include "gnn/Runtime/Module.h"
#include "gnn/Tensor/HalfFloat.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <thread>
#include <tuple>

using namespace gnn::runtime;
namespace fs = std::filesystem;

namespace {

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    if (!CudaDriver::get().ok())                                               \
      GTEST_SKIP() << "no CUDA device: " << CudaDriver::get().message();       \
  } while (false)

/// The CSR/CSC/permutation/statistics of a graph, built on the CPU.
struct Expected {
  std::vector<int64_t> rowPtr, col, csrEdge, colPtr, row, cscEdge, cscToCsr;
  std::vector<int64_t> inDeg, outDeg;
  gnn::GraphStats stats;
};

Expected cpuBuild(const gnn::HostGraph &g) {
  Expected x;
  int64_t n = g.numNodes, e = g.numEdges();
  auto sorted = [&](const std::vector<int64_t> &major,
                    const std::vector<int64_t> &minor) {
    std::vector<int64_t> order(e);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return std::tie(major[a], minor[a]) < std::tie(major[b], minor[b]);
    });
    return order;
  };
  // CSR: by destination, each row in edge-list order; CSC: by source, then
  // destination, ties in edge-list order.
  std::vector<int64_t> none(e, 0);
  std::vector<int64_t> csr = sorted(g.dst, none), csc = sorted(g.src, g.dst);
  x.inDeg.assign(n, 0);
  x.outDeg.assign(n, 0);
  for (int64_t i = 0; i < e; ++i) {
    ++x.inDeg[g.dst[i]];
    ++x.outDeg[g.src[i]];
  }
  auto ptr = [&](const std::vector<int64_t> &deg) {
    std::vector<int64_t> p(n + 1, 0);
    for (int64_t i = 0; i < n; ++i)
      p[i + 1] = p[i] + deg[i];
    return p;
  };
  x.rowPtr = ptr(x.inDeg);
  x.colPtr = ptr(x.outDeg);
  std::vector<int64_t> slotOf(e);
  for (int64_t i = 0; i < e; ++i) {
    x.col.push_back(g.src[csr[i]]);
    x.csrEdge.push_back(csr[i]);
    slotOf[csr[i]] = i;
    x.row.push_back(g.dst[csc[i]]);
    x.cscEdge.push_back(csc[i]);
  }
  for (int64_t i = 0; i < e; ++i)
    x.cscToCsr.push_back(slotOf[csc[i]]);
  // The host's statistics (HostGraphTest checks them by hand).
  x.stats = gnn::computeStats(g);
  return x;
}

void expectSameGraph(const gnn::HostGraph &host, GraphBuildOptions options = {}) {
  StatusOr<std::unique_ptr<Graph>> built = Graph::fromHost(host, nullptr, options);
  ASSERT_TRUE(built.ok()) << built.message();
  const Graph &g = **built;
  Expected x = cpuBuild(host);
  int64_t n = host.numNodes, e = host.numEdges();
  auto dl = [&](const void *p, int64_t count) { return *g.download(p, count); };
  EXPECT_EQ(dl(g.csrRowPtr(), n + 1), x.rowPtr);
  EXPECT_EQ(dl(g.csrCol(), e), x.col);
  EXPECT_EQ(dl(g.csrEdge(), e), x.csrEdge);
  std::vector<int64_t> rowOfSlot;
  for (int64_t i = 0; i < e; ++i)
    rowOfSlot.push_back(host.dst[x.csrEdge[i]]);
  EXPECT_EQ(dl(g.csrDst(), e), rowOfSlot);
  EXPECT_EQ(dl(g.cscColPtr(), n + 1), x.colPtr);
  EXPECT_EQ(dl(g.cscRow(), e), x.row);
  EXPECT_EQ(dl(g.cscEdge(), e), x.cscEdge);
  EXPECT_EQ(dl(g.cscToCsr(), e), x.cscToCsr);
  std::vector<int32_t> in(n), out(n);
  ASSERT_EQ(cudaMemcpy(in.data(), g.inDegree(), n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out.data(), g.outDegree(), n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::vector<int64_t>(in.begin(), in.end()), x.inDeg);
  EXPECT_EQ(std::vector<int64_t>(out.begin(), out.end()), x.outDeg);
  // Every statistic, the degree histogram and the CSR-order flag included.
  EXPECT_EQ(g.statistics().toJson(), x.stats.toJson());
  EXPECT_EQ(g.indexBits(), options.force64 ? 64 : 32);
}

std::string datasetDir(const std::string &name) {
  const char *env = std::getenv("GNNC_DATASETS");
  std::string base = env ? env : std::string(GNNC_SOURCE_DIR) + "/../shared/datasets";
  return base + "/" + name;
}

void expectSameDataset(const std::string &name) {
  std::string dir = datasetDir(name);
  if (!fs::exists(dir + "/meta.txt"))
    GTEST_SKIP() << "data set not found: " << dir;
  gnn::GraphOrError g = gnn::loadGraph(dir);
  ASSERT_TRUE(g.ok()) << g.error;
  expectSameGraph(g.graph);
}

TEST(GpuGraph, Cora) { REQUIRE_GPU(); expectSameDataset("cora"); }
TEST(GpuGraph, MusaeGithub) { REQUIRE_GPU(); expectSameDataset("musae-github"); }
TEST(GpuGraph, SocSlashdotDirected) { REQUIRE_GPU(); expectSameDataset("soc-slashdot0902"); }

TEST(GpuGraph, SyntheticPowerLaw2_3M) {
  REQUIRE_GPU();
  expectSameGraph(gnn::generatePowerLaw(169343, 2332486, 7));
}

TEST(GpuGraph, SixtyFourBitIndices) {
  REQUIRE_GPU();
  expectSameGraph(gnn::generatePowerLaw(3000, 40000, 3), {true, true});
}

TEST(GpuGraph, BatchOfSmallGraphs) {
  REQUIRE_GPU();
  expectSameGraph(gnn::generateBatch(2000, 5, 29, 2.2, 4));
}

TEST(GpuGraph, EdgeCases) {
  REQUIRE_GPU();
  gnn::HostGraph g;
  g.numNodes = 6; // self-loop, duplicates, isolated node 5, node 3 no in-edges
  g.src = {0, 0, 1, 2, 3, 4, 1};
  g.dst = {1, 1, 2, 2, 0, 1, 4};
  expectSameGraph(g);
  gnn::HostGraph empty;
  expectSameGraph(empty);
  gnn::HostGraph noEdges;
  noEdges.numNodes = 4;
  expectSameGraph(noEdges);
  gnn::HostGraph star; // one hub of in-degree 100000
  star.numNodes = 100001;
  for (int i = 1; i <= 100000; ++i) {
    star.src.push_back(i);
    star.dst.push_back(0);
  }
  expectSameGraph(star);
}

/// int32 ids on the device.
DeviceBuffer upload(const std::vector<int32_t> &v) {
  DeviceBuffer b = std::move(*DeviceBuffer::allocate(v.size() * 4));
  EXPECT_TRUE(b.upload(v.data(), v.size() * 4).ok());
  return b;
}

TEST(GpuGraph, DestinationSortedEdgesSkipTheSort) {
  REQUIRE_GPU();
  // Edges sorted by destination, each row's sources in no order: with the
  // hint the CSR is the edge list itself; the same graph as without it.
  gnn::HostGraph g = gnn::generatePowerLaw(20000, 300000, 5);
  std::vector<int64_t> order(g.numEdges());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return g.dst[a] < g.dst[b]; });
  gnn::HostGraph sorted = g;
  for (size_t i = 0; i < order.size(); ++i) {
    sorted.src[i] = g.src[order[i]];
    sorted.dst[i] = g.dst[order[i]];
  }
  GraphBuildOptions hint;
  hint.dstSorted = true;
  expectSameGraph(sorted, hint);
  EXPECT_TRUE(gnn::computeStats(sorted).csrOrder);
  // A wrong hint (the unsorted list) builds again with the sort.
  EXPECT_FALSE(gnn::computeStats(g).csrOrder);
  expectSameGraph(g, hint);
  gnn::HostGraph empty, noEdges;
  noEdges.numNodes = 3;
  expectSameGraph(empty, hint);
  expectSameGraph(noEdges, hint);
  GraphBuildOptions wide = hint;
  wide.force64 = true;
  expectSameGraph(sorted, wide);
  // An id out of range is reported as without the hint (sorted or not).
  for (std::vector<int32_t> d : {std::vector<int32_t>{0, 1, 2, 9},
                                 std::vector<int32_t>{1, 0, 9, 2}}) {
    DeviceBuffer src = upload({0, 1, 2, 3}), dst = upload(d);
    StatusOr<std::unique_ptr<Graph>> built = Graph::build(
        src.data(), dst.data(), 4, 4, IndexType::Int32, nullptr, nullptr, hint);
    ASSERT_FALSE(built.ok());
    EXPECT_NE(built.message().find("has a node id outside [0, 4)"), std::string::npos)
        << built.message();
  }
}

TEST(GpuGraph, BipartiteSidesAreCheckedInTheBuild) {
  REQUIRE_GPU();
  // Sources below numSrc and targets below numDst, each its own side of a
  // graph over max(numSrc, numDst) node rows; the same graph as without
  // the sides when they hold.
  GraphBuildOptions sides;
  sides.numSrc = 6;
  sides.numDst = 3;
  DeviceBuffer src = upload({0, 5, 3, 1}), dst = upload({0, 2, 2, 1});
  StatusOr<std::unique_ptr<Graph>> g = Graph::build(
      src.data(), dst.data(), 4, 6, IndexType::Int32, nullptr, nullptr, sides);
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(*(*g)->download((*g)->csrRowPtr(), 7),
            (std::vector<int64_t>{0, 1, 2, 4, 4, 4, 4}));
  DeviceBuffer far = upload({0, 2, 3, 1}); // target 3 >= numDst
  g = Graph::build(src.data(), far.data(), 4, 6, IndexType::Int32, nullptr, nullptr,
                   sides);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("edge_index[:, 2] = (3, 3) has a source id outside "
                             "[0, 6) or a target id outside [0, 3)"),
            std::string::npos)
      << g.message();
  sides.numSrc = 2; // source 5 >= numSrc, with a (true) sorted claim
  sides.dstSorted = true;
  g = Graph::build(src.data(), dst.data(), 4, 6, IndexType::Int32, nullptr, nullptr,
                   sides);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("edge_index[:, 1] = (5, 2)"), std::string::npos)
      << g.message();
}

TEST(GpuGraph, DeviceSideValidation) {
  REQUIRE_GPU();
  DeviceBuffer src = upload({0, 1, 2, 9}), dst = upload({1, 2, 0, 1});
  StatusOr<std::unique_ptr<Graph>> g =
      Graph::build(src.data(), dst.data(), 4, 4, IndexType::Int32);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("edge_index[:, 3] = (9, 1) has a node id outside [0, 4)"),
            std::string::npos)
      << g.message();
  DeviceBuffer negative = upload({0, -1, 2, 3});
  g = Graph::build(negative.data(), dst.data(), 4, 4, IndexType::Int32);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("edge_index[:, 1] = (-1, 2)"), std::string::npos);

  DeviceBuffer s2 = upload({0, 1, 2, 3}), d2 = upload({1, 0, 3, 2});
  std::vector<int64_t> unsorted = {0, 1, 0, 1}, crossing = {0, 0, 0, 1};
  DeviceBuffer b1 = std::move(*DeviceBuffer::allocate(32));
  ASSERT_TRUE(b1.upload(unsorted.data(), 32).ok());
  g = Graph::build(s2.data(), d2.data(), 4, 4, IndexType::Int32, b1.as<int64_t>());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("batch must be nonnegative and sorted, but batch[2] = 0 follows 1"),
            std::string::npos)
      << g.message();
  ASSERT_TRUE(b1.upload(crossing.data(), 32).ok());
  g = Graph::build(s2.data(), d2.data(), 4, 4, IndexType::Int32, b1.as<int64_t>());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("edge 2 joins nodes of two different graphs"),
            std::string::npos)
      << g.message();
}

TEST(GpuGraph, DegreeBuckets) {
  REQUIRE_GPU();
  gnn::HostGraph host = gnn::generatePowerLaw(20000, 300000, 5);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  StatusOr<DegreeBuckets> b = (*g)->buckets(0.9);
  ASSERT_TRUE(b.ok()) << b.message();
  Expected x = cpuBuild(host);
  EXPECT_EQ(b->threshold, x.stats.p90);
  std::vector<int64_t> heavy, light;
  for (int64_t i = 0; i < host.numNodes; ++i)
    (x.inDeg[i] > b->threshold ? heavy : light).push_back(i);
  EXPECT_EQ(b->numHeavy, static_cast<int64_t>(heavy.size()));
  EXPECT_EQ(b->numLight, static_cast<int64_t>(light.size()));
  EXPECT_EQ(*(*g)->download(b->heavyRows.data(), b->numHeavy), heavy);
  EXPECT_EQ(*(*g)->download(b->lightRows.data(), b->numLight), light);
  EXPECT_FALSE((*g)->buckets(1.5).ok());
}

/// The per-graph node offsets equal the host's (batch ids, or the ranges
/// no edge crosses), with both index widths, and so do the graph sizes.
TEST(GpuGraph, GraphOffsets) {
  REQUIRE_GPU();
  gnn::HostGraph ranges;
  ranges.numNodes = 9;
  ranges.src = {2, 3, 4, 6, 5, 5, 8};
  ranges.dst = {0, 3, 5, 5, 6, 6, 8};
  gnn::HostGraph empty;
  for (const gnn::HostGraph &host :
       {gnn::generateBatch(300, 3, 30, 2.2, 7), ranges, empty,
        gnn::generatePowerLaw(2000, 20000, 3)})
    for (bool ids : {true, false}) {
      gnn::HostGraph h = host;
      if (!ids)
        h.graphIds.clear();
      std::vector<int64_t> want = gnn::graphOffsets(h);
      for (bool wide : {false, true}) {
        GraphBuildOptions options;
        options.force64 = wide;
        StatusOr<std::unique_ptr<Graph>> g =
            Graph::fromHost(h, nullptr, options);
        ASSERT_TRUE(g.ok()) << g.message();
        EXPECT_EQ(*(*g)->download((*g)->graphOffsets(), want.size()), want);
        gnn::GraphStats s = gnn::computeStats(h);
        EXPECT_EQ((*g)->statistics().graphs, s.graphs);
        EXPECT_EQ((*g)->statistics().largestGraph, s.largestGraph);
        EXPECT_EQ((*g)->statistics().smallestGraph, s.smallestGraph);
      }
    }
}

/// Nodes in increasing in- and out-degree (ties by id; the max/min
/// backward reads the densest row from the end). A power-law graph (hubs)
/// and one with isolated nodes, both index widths.
TEST(GpuGraph, NodesByDegree) {
  REQUIRE_GPU();
  gnn::HostGraph sparse;
  sparse.numNodes = 50;
  sparse.src = {3, 3, 7, 7, 7, 40};
  sparse.dst = {7, 40, 3, 40, 40, 7};
  for (const gnn::HostGraph &host :
       {gnn::generatePowerLaw(20000, 300000, 5), sparse})
    for (bool wide : {false, true}) {
      GraphBuildOptions options;
      options.force64 = wide;
      StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host, nullptr, options);
      ASSERT_TRUE(g.ok()) << g.message();
      Expected x = cpuBuild(host);
      int64_t n = host.numNodes;
      for (bool in : {true, false}) {
        const std::vector<int64_t> &deg = in ? x.inDeg : x.outDeg;
        std::vector<int64_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return deg[a] < deg[b]; });
        const Graph &graph = **g;
        EXPECT_EQ(*graph.download(in ? graph.csrRowsByDegree()
                                     : graph.cscColsByDegree(), n), order)
            << (in ? "rows" : "columns") << (wide ? ", 64-bit" : "");
      }
    }
}

/// The hand-written Program: y = (D^-1 (W_e A) x) w with cuSPARSE SpMM (edge
/// weights), an NVRTC kernel scaling rows by 1/(1 + in-degree), and a cuBLAS
/// GEMM.
Program handwrittenProgram() {
  Program p;
  p.name = "handwritten";
  p.kernels = {"scale_rows"};
  p.units.push_back(SourceUnit{{"scale_rows"}, R"cuda(
#include "gnn_device.cuh"
extern "C" __global__ void scale_rows(float *h, const int *in_degree, long long n, int f) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n * f)
    h[i] *= 1.0f / (1.0f + in_degree[i / f]);
}
)cuda"});
  auto f = [](const char *t) { return *Formula::parse(t); };
  p.buffers = {{"x", BufferRole::Input, DType::F32, f("nodes * 32")},
               {"ew", BufferRole::Input, DType::F32, f("edges")},
               {"w", BufferRole::Input, DType::F32, f("32 * 16")},
               {"h", BufferRole::Temp, DType::F32, f("nodes * 32")},
               {"y", BufferRole::Output, DType::F32, f("nodes * 16")}};
  p.steps.push_back(SpmmStep{"x", "h", "ew", f("32"), 1.0f, 0.0f});
  using namespace test;
  LaunchStep l = launch("scale_rows", "ceil_div(nodes * 32, 256)", 256);
  l.args = {named(KernelArg::Kind::Buffer, "h"),
            named(KernelArg::Kind::Graph, "in_degree"),
            integer(KernelArg::Kind::I64, "nodes"),
            integer(KernelArg::Kind::I32, "32")};
  p.steps.push_back(l);
  p.steps.push_back(GemmStep{"h", "w", "y", f("nodes"), f("16"), f("32"), false,
                             false, 1.0f, 0.0f});
  return p;
}

/// A block-per-graph Program for graphs of at most 8 nodes: block g writes
/// g at its graph's nodes graph_ptr[g] .. graph_ptr[g + 1] (one block per
/// graph, as the graph_block kernels run).
Program graphIdsProgram() {
  Program p;
  p.name = "graph_ids";
  p.kernels = {"graph_ids"};
  p.maxGraphNodes = 8;
  p.units.push_back(SourceUnit{{"graph_ids"}, R"cuda(
extern "C" __global__ void graph_ids(int *ids, const int *graph_ptr) {
  for (int v = graph_ptr[blockIdx.x] + threadIdx.x; v < graph_ptr[blockIdx.x + 1];
       v += blockDim.x)
    ids[v] = blockIdx.x;
}
)cuda"});
  auto f = [](const char *t) { return *Formula::parse(t); };
  p.buffers = {{"ids", BufferRole::Output, DType::I32, f("nodes")}};
  LaunchStep l = test::launch("graph_ids", "graphs", 32);
  l.args = {test::named(KernelArg::Kind::Buffer, "ids"),
            test::named(KernelArg::Kind::Graph, "graph_ptr")};
  p.steps.push_back(l);
  return p;
}

/// graph_ptr binds by name, through the text form, and a Program for graphs
/// of at most N nodes refuses a graph whose largest has more, before it
/// launches anything; a graph without nodes launches nothing.
TEST(GpuProgram, BlockPerGraphBindsGraphPtrAndRefusesLargerGraphs) {
  REQUIRE_GPU();
  StatusOr<Program> parsed = Program::parse(graphIdsProgram().toJson());
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->maxGraphNodes, 8);
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex =
      Executable::create(*parsed, compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  // Without ids: the ranges no edge crosses are the batch's graphs.
  gnn::HostGraph small = gnn::generateBatch(200, 1, 8, 2.0, 3);
  small.graphIds.clear();
  gnn::HostGraph empty;
  for (const gnn::HostGraph *host : {&small, &empty}) {
    StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(*host);
    ASSERT_TRUE(g.ok()) << g.message();
    int64_t n = host->numNodes;
    DeviceBuffer ids =
        std::move(*DeviceBuffer::allocate(std::max<int64_t>(n, 1) * 4));
    Status s = (*ex)->run(**g, {{"ids", ids.data()}});
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<int> got(n);
    ASSERT_TRUE(ids.download(got.data(), n * 4).ok());
    std::vector<int64_t> offsets = gnn::graphOffsets(*host);
    std::vector<int> want(n);
    for (size_t k = 0; k + 1 < offsets.size(); ++k)
      std::fill(want.begin() + offsets[k], want.begin() + offsets[k + 1],
                static_cast<int>(k));
    EXPECT_EQ(got, want);
  }
  gnn::HostGraph large = gnn::generateBatch(20, 9, 12, 2.0, 3);
  large.graphIds.clear();
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(large);
  ASSERT_TRUE(g.ok()) << g.message();
  DeviceBuffer ids = std::move(*DeviceBuffer::allocate(large.numNodes * 4));
  Status s = (*ex)->run(**g, {{"ids", ids.data()}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(
                "program 'graph_ids' was generated for graphs of at most 8 "
                "nodes each (its block-per-graph kernels hold a graph in "
                "shared memory) but this graph's largest has " +
                std::to_string(gnn::computeStats(large).largestGraph) +
                " nodes"),
            std::string::npos)
      << s.message();
}

/// Random inputs of handwrittenProgram on `host` (x in [-1, 1), ew in
/// [0, 1), w in [-0.5, 0.5), drawn in that order), on the host and on the
/// device; `bindings(y)` binds them and the output `y`.
struct HandwrittenInputs {
  std::vector<float> x, ew, w;
  DeviceBuffer dx, dew, dw;

  void make(const gnn::HostGraph &host, uint64_t seed) {
    x.resize(host.numNodes * 32);
    ew.resize(host.numEdges());
    w.resize(32 * 16);
    gnn::SplitMix64 rng(seed);
    for (float &v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
    for (float &v : ew) v = static_cast<float>(rng.uniform());
    for (float &v : w) v = static_cast<float>(rng.uniform() - 0.5);
    dx = std::move(*DeviceBuffer::allocate(x.size() * 4));
    dew = std::move(*DeviceBuffer::allocate(ew.size() * 4));
    dw = std::move(*DeviceBuffer::allocate(w.size() * 4));
    ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
    ASSERT_TRUE(dew.upload(ew.data(), ew.size() * 4).ok());
    ASSERT_TRUE(dw.upload(w.data(), w.size() * 4).ok());
  }
  std::map<std::string, void *> bindings(void *y) const {
    return {{"x", dx.data()}, {"ew", dew.data()}, {"w", dw.data()}, {"y", y}};
  }
};

TEST(GpuProgram, SpmmElementwiseGemm) {
  REQUIRE_GPU();
  const int F = 32, O = 16;
  Program p = handwrittenProgram();
  // Through the text form, as a compiler would hand it over.
  StatusOr<Program> parsed = Program::parse(p.toJson());
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex = Executable::create(*parsed, compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  EXPECT_GT((*ex)->kernelInfo()["scale_rows"].registers, 0);

  gnn::HostGraph host = gnn::generatePowerLaw(5000, 60000, 9);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  int64_t n = host.numNodes, e = host.numEdges();
  HandwrittenInputs in;
  ASSERT_NO_FATAL_FAILURE(in.make(host, 1));
  const std::vector<float> &x = in.x, &ew = in.ew, &w = in.w;
  std::vector<float> y(n * O);
  DeviceBuffer dy = std::move(*DeviceBuffer::allocate(y.size() * 4));
  for (int rep = 0; rep < 2; ++rep) { // the second run reuses the cached plan
    Status s = (*ex)->run(**g, in.bindings(dy.data()));
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_TRUE(dy.download(y.data(), y.size() * 4).ok());
    std::vector<double> h(n * F, 0.0);
    std::vector<int64_t> deg(n, 0);
    for (int64_t i = 0; i < e; ++i) {
      ++deg[host.dst[i]];
      for (int c = 0; c < F; ++c)
        h[host.dst[i] * F + c] += double(ew[i]) * x[host.src[i] * F + c];
    }
    double worst = 0;
    for (int64_t r = 0; r < n; ++r)
      for (int o = 0; o < O; ++o) {
        double want = 0;
        for (int c = 0; c < F; ++c)
          want += h[r * F + c] / (1.0 + deg[r]) * w[c * O + o];
        worst = std::max(worst, std::fabs(y[r * O + o] - want) / (1 + std::fabs(want)));
      }
    EXPECT_LT(worst, 1e-4);
  }
  // Bindings are checked.
  Status missing = (*ex)->run(**g, {{"x", in.dx.data()}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("input buffer 'ew' of program 'handwritten' is not bound"),
            std::string::npos)
      << missing.message();
  Status extra = (*ex)->run(**g, {{"h", in.dx.data()}});
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.message().find("binding 'h' is not an input or output"),
            std::string::npos);
}

TEST(GpuProgram, TempsInAnOutputNotYetWritten) {
  REQUIRE_GPU();
  // The handwritten program plus an output `y2` (as large as the temp h)
  // that only a last copy step writes: h dies before y2's first step, so
  // the plan puts h in y2's bytes and the arena is empty.
  Program p = handwrittenProgram();
  p.buffers.push_back(
      {"y2", BufferRole::Output, DType::F32, *Formula::parse("nodes * 32")});
  p.steps.push_back(CopyStep{"x", "y2", *Formula::parse("nodes * 32")});
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex = Executable::create(p, compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  StatusOr<std::unique_ptr<Executable>> plain =
      Executable::create(handwrittenProgram(), compiler);
  ASSERT_TRUE(plain.ok()) << plain.message();
  gnn::HostGraph host = gnn::generatePowerLaw(3000, 40000, 4);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  int64_t n = host.numNodes;
  StatusOr<size_t> bytes = (*ex)->workspaceBytes(**g);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  EXPECT_EQ(*bytes, 0u);
  HandwrittenInputs in;
  ASSERT_NO_FATAL_FAILURE(in.make(host, 8));
  DeviceBuffer y = std::move(*DeviceBuffer::allocate(n * 16 * 4));
  DeviceBuffer want = std::move(*DeviceBuffer::allocate(n * 16 * 4));
  DeviceBuffer y2 = std::move(*DeviceBuffer::allocate(n * 32 * 4 + 16));
  Status s = (*plain)->run(**g, in.bindings(want.data()));
  ASSERT_TRUE(s.ok()) << s.message();
  auto withY2 = [&](void *p) {
    std::map<std::string, void *> b = in.bindings(y.data());
    b["y2"] = p;
    return b;
  };
  s = (*ex)->run(**g, withY2(y2.data()));
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> got(n * 16), ref(n * 16), copy(n * 32);
  ASSERT_TRUE(y.download(got.data(), got.size() * 4).ok());
  ASSERT_TRUE(want.download(ref.data(), ref.size() * 4).ok());
  ASSERT_TRUE(y2.download(copy.data(), copy.size() * 4).ok());
  // (cuBLAS may pick another algorithm for h at another address.)
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[i]) - ref[i]) /
                                (1 + std::fabs(double(ref[i]))));
  EXPECT_LT(worst, 1e-5);
  EXPECT_EQ(copy, in.x); // y2 written after h was done with its bytes
  // An output holding temps must be aligned and must not be an input.
  s = (*ex)->run(**g, withY2(static_cast<char *>(y2.data()) + 4));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output 'y2' of program 'handwritten' holds "
                             "temporaries before it is written and must be "
                             "16-byte aligned"),
            std::string::npos)
      << s.message();
  s = (*ex)->run(**g, withY2(in.dx.data()));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output 'y2' of program 'handwritten' overlaps "
                             "input 'x'"),
            std::string::npos)
      << s.message();
}

TEST(GpuProgram, F64FillSpmmGemmAndEdgeOrder) {
  REQUIRE_GPU();
  // y = (A(ew) x + 0.1) w in double precision, through f64 buffers: a fill
  // with a value no float holds, cuSPARSE SpMM (CUDA_R_64F) with beta = 1,
  // cublasDgemm; and the f64 edge-order conversion kernel of the printed
  // prelude applied to the edge weights (gnn_edges_to_slots_f64).
  const int F = 8, O = 4;
  Program p;
  p.name = "double";
  p.kernels = {"gnn_edges_to_slots_f64"};
  p.units.push_back(SourceUnit{{"gnn_edges_to_slots_f64"}, R"cuda(
typedef int idx_t;
#include "gnn_device.cuh"
extern "C" __global__ void gnn_edges_to_slots_f64(double *__restrict__ out,
    const double *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= rows * width) return;
  const long long i = t / width, k = t % width;
  out[t] = in[(long long)csr_edge[i] * width + k];
}
)cuda"});
  auto f = [](const char *t) { return *Formula::parse(t); };
  p.buffers = {{"x", BufferRole::Input, DType::F64, f("nodes * 8")},
               {"ew", BufferRole::Input, DType::F64, f("edges")},
               {"w", BufferRole::Input, DType::F64, f("8 * 4")},
               {"h", BufferRole::Temp, DType::F64, f("nodes * 8")},
               {"y", BufferRole::Output, DType::F64, f("nodes * 4")},
               {"slots", BufferRole::Output, DType::F64, f("edges")}};
  p.steps.push_back(FillStep{"h", 0.1});
  p.steps.push_back(SpmmStep{"x", "h", "ew", f("8"), 1.0f, 1.0f});
  p.steps.push_back(GemmStep{"h", "w", "y", f("nodes"), f("4"), f("8"), false,
                             false, 1.0f, 0.0f});
  using namespace test;
  LaunchStep l = launch("gnn_edges_to_slots_f64", "ceil_div(edges, 256)", 256);
  l.args = {named(KernelArg::Kind::Buffer, "slots"),
            named(KernelArg::Kind::Buffer, "ew"),
            named(KernelArg::Kind::Graph, "csr_edge"),
            integer(KernelArg::Kind::I64, "edges"),
            integer(KernelArg::Kind::I64, "1")};
  p.steps.push_back(l);
  StatusOr<Program> parsed = Program::parse(p.toJson());
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex =
      Executable::create(*parsed, compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();

  gnn::HostGraph host = gnn::generatePowerLaw(4000, 50000, 4);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  int64_t n = host.numNodes, e = host.numEdges();
  std::vector<double> x(n * F), ew(e), w(F * O), y(n * O), slots(e);
  gnn::SplitMix64 rng(7);
  for (double &v : x) v = rng.uniform() * 2 - 1;
  for (double &v : ew) v = rng.uniform();
  for (double &v : w) v = rng.uniform() - 0.5;
  DeviceBuffer dx = std::move(*DeviceBuffer::allocate(x.size() * 8));
  DeviceBuffer dew = std::move(*DeviceBuffer::allocate(ew.size() * 8));
  DeviceBuffer dw = std::move(*DeviceBuffer::allocate(w.size() * 8));
  DeviceBuffer dy = std::move(*DeviceBuffer::allocate(y.size() * 8));
  DeviceBuffer ds = std::move(*DeviceBuffer::allocate(slots.size() * 8));
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 8).ok());
  ASSERT_TRUE(dew.upload(ew.data(), ew.size() * 8).ok());
  ASSERT_TRUE(dw.upload(w.data(), w.size() * 8).ok());
  Status s = (*ex)->run(**g, {{"x", dx.data()}, {"ew", dew.data()},
                              {"w", dw.data()}, {"y", dy.data()},
                              {"slots", ds.data()}});
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(dy.download(y.data(), y.size() * 8).ok());
  ASSERT_TRUE(ds.download(slots.data(), slots.size() * 8).ok());
  std::vector<double> h(n * F, 0.1);
  for (int64_t i = 0; i < e; ++i)
    for (int c = 0; c < F; ++c)
      h[host.dst[i] * F + c] += ew[i] * x[host.src[i] * F + c];
  double worst = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int o = 0; o < O; ++o) {
      double want = 0;
      for (int c = 0; c < F; ++c)
        want += h[r * F + c] * w[c * O + o];
      worst = std::max(worst, std::fabs(y[r * O + o] - want) / (1 + std::fabs(want)));
    }
  EXPECT_LT(worst, 1e-12) << "f64 steps must be exact to double rounding";
  // Slot order: CSR by destination, each row in edge-list order; every
  // weight appears once, bit for bit.
  Expected want = cpuBuild(host);
  for (int64_t i = 0; i < e; ++i)
    ASSERT_EQ(slots[i], ew[want.csrEdge[i]]) << "slot " << i;
}

TEST(GpuProgram, HalfFillGemmAndEdgeOrder) {
  REQUIRE_GPU();
  // bf16 and f16 buffers: a fill rounded to the type (0.1 is no half value),
  // a GEMM on half storage computed in f32 (cublasGemmEx,
  // CUBLAS_COMPUTE_32F) and rounded once, and the half edge-order
  // conversion kernel of the printed prelude (gnn_edges_to_slots_bf16 /
  // _f16, on the device header's 16-bit types), which moves bits exactly.
  const int F = 8, O = 4;
  for (DType type : {DType::BF16, DType::F16}) {
    gnn::HalfKind kind =
        type == DType::BF16 ? gnn::HalfKind::BF16 : gnn::HalfKind::F16;
    const char *t = type == DType::BF16 ? "bf16" : "f16";
    std::string kernel = std::string("gnn_edges_to_slots_") + t;
    Program p;
    p.name = std::string("half_") + t;
    p.kernels = {kernel};
    p.units.push_back(SourceUnit{{kernel}, std::string(R"cuda(
typedef int idx_t;
#include "gnn_device.cuh"
extern "C" __global__ void KERNEL(TYPE *__restrict__ out,
    const TYPE *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= rows * width) return;
  const long long i = t / width, k = t % width;
  out[t] = in[(long long)csr_edge[i] * width + k];
}
)cuda")});
    std::string &src = p.units.back().text;
    src.replace(src.find("KERNEL"), 6, kernel);
    for (size_t at; (at = src.find("TYPE")) != std::string::npos;)
      src.replace(at, 4, type == DType::BF16 ? "gnn_bf16" : "gnn_f16");
    auto f = [](const char *s) { return *Formula::parse(s); };
    p.buffers = {{"ew", BufferRole::Input, type, f("edges")},
                 {"w", BufferRole::Input, type, f("8 * 4")},
                 {"h", BufferRole::Temp, type, f("nodes * 8")},
                 {"y", BufferRole::Output, type, f("nodes * 4")},
                 {"slots", BufferRole::Output, type, f("edges")}};
    p.steps.push_back(FillStep{"h", 0.1});
    p.steps.push_back(GemmStep{"h", "w", "y", f("nodes"), f("4"), f("8"), false,
                               false, 1.0f, 0.0f});
    using namespace test;
    LaunchStep l = launch(kernel, "ceil_div(edges, 256)", 256);
    l.args = {named(KernelArg::Kind::Buffer, "slots"),
              named(KernelArg::Kind::Buffer, "ew"),
              named(KernelArg::Kind::Graph, "csr_edge"),
              integer(KernelArg::Kind::I64, "edges"),
              integer(KernelArg::Kind::I64, "1")};
    p.steps.push_back(l);
    StatusOr<Program> parsed = Program::parse(p.toJson());
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    Compiler compiler("");
    StatusOr<std::unique_ptr<Executable>> ex =
        Executable::create(*parsed, compiler);
    ASSERT_TRUE(ex.ok()) << ex.message();

    gnn::HostGraph host = gnn::generatePowerLaw(2000, 20000, 4);
    StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
    ASSERT_TRUE(g.ok()) << g.message();
    int64_t n = host.numNodes, e = host.numEdges();
    std::vector<uint16_t> ew(e), w(F * O), y(n * O), slots(e);
    gnn::SplitMix64 rng(9);
    for (uint16_t &v : ew)
      v = gnn::halfBits(rng.uniform() * 2 - 1, kind);
    for (uint16_t &v : w)
      v = gnn::halfBits(rng.uniform() - 0.5, kind);
    DeviceBuffer dew = std::move(*DeviceBuffer::allocate(e * 2));
    DeviceBuffer dw = std::move(*DeviceBuffer::allocate(w.size() * 2));
    DeviceBuffer dy = std::move(*DeviceBuffer::allocate(y.size() * 2));
    DeviceBuffer ds = std::move(*DeviceBuffer::allocate(e * 2));
    ASSERT_TRUE(dew.upload(ew.data(), e * 2).ok());
    ASSERT_TRUE(dw.upload(w.data(), w.size() * 2).ok());
    Status s = (*ex)->run(**g, {{"ew", dew.data()},
                                {"w", dw.data()},
                                {"y", dy.data()},
                                {"slots", ds.data()}});
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_TRUE(dy.download(y.data(), y.size() * 2).ok());
    ASSERT_TRUE(ds.download(slots.data(), e * 2).ok());
    // y[r, o] = h * sum_c w[c, o], h = 0.1 rounded to the type, the sum in
    // f32 and the product rounded once: within one rounding of the type.
    double h = gnn::roundToHalf(0.1, kind), worst = 0;
    for (int64_t r = 0; r < n; ++r)
      for (int o = 0; o < O; ++o) {
        double want = 0;
        for (int c = 0; c < F; ++c)
          want += h * gnn::halfValue(w[c * O + o], kind);
        double got = gnn::halfValue(y[r * O + o], kind);
        worst = std::max(worst, std::fabs(got - want) / (1 + std::fabs(want)));
      }
    EXPECT_LT(worst, type == DType::BF16 ? 1e-2 : 2e-3) << t;
    // Slot order, bit for bit.
    Expected want = cpuBuild(host);
    for (int64_t i = 0; i < e; ++i)
      ASSERT_EQ(slots[i], ew[want.csrEdge[i]]) << t << " slot " << i;
  }
}

TEST(GpuDevice, ChangeFlagsAreReusedAfterAQuarantineAndStartClear) {
  REQUIRE_GPU();
  // A released flag is not handed out again before 256 later releases,
  // and every flag starts at 0 (a word set by its last owner is cleared).
  auto make = [] {
    StatusOr<std::unique_ptr<HostFlag>> f = HostFlag::create();
    EXPECT_TRUE(f.ok()) << f.message();
    return std::move(*f);
  };
  std::unique_ptr<HostFlag> first = make();
  unsigned *word = first->word();
  *word = 1; // as a compare kernel that found a change
  first.reset();
  std::vector<std::unique_ptr<HostFlag>> held;
  for (int i = 0; i < 255; ++i) {
    held.push_back(make());
    EXPECT_NE(held.back()->word(), word) << "reused during its quarantine";
    EXPECT_EQ(held.back()->read(), 0u);
  }
  std::vector<unsigned *> words;
  for (auto &f : held)
    words.push_back(f->word());
  held.clear(); // 255 more releases: the next one lets `word` out
  bool seen = false;
  for (int i = 0; i < 4 && !seen; ++i) {
    std::unique_ptr<HostFlag> f = make();
    EXPECT_EQ(f->read(), 0u);
    seen = f->word() == word;
  }
  EXPECT_TRUE(seen) << "a word out of its quarantine is not handed out again";
  // A change check's verdict reaches the host through the mapped word.
  std::unique_ptr<HostFlag> flag = make();
  DeviceBuffer a = std::move(*DeviceBuffer::allocate(64));
  DeviceBuffer b = std::move(*DeviceBuffer::allocate(64));
  ASSERT_EQ(cudaMemset(a.data(), 0, 64), cudaSuccess);
  ASSERT_EQ(cudaMemset(b.data(), 0, 64), cudaSuccess);
  ASSERT_TRUE(compareAsync(a.data(), b.data(), 64, flag->word(), nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(flag->read(), 0u);
  ASSERT_EQ(cudaMemset(static_cast<char *>(b.data()) + 60, 1, 1), cudaSuccess);
  ASSERT_TRUE(compareAsync(a.data(), b.data(), 64, flag->word(), nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_NE(flag->read(), 0u);
}

TEST(GpuDevice, MemoryInfo) {
  REQUIRE_GPU();
  StatusOr<DeviceMemoryInfo> before = deviceMemoryInfo();
  ASSERT_TRUE(before.ok()) << before.message();
  EXPECT_GT(before->totalBytes, 0);
  EXPECT_GT(before->freeBytes, 0);
  EXPECT_LE(before->freeBytes, before->totalBytes);
  {
    // Memory freed into the runtime's pool still counts as free.
    DeviceBuffer big = std::move(*DeviceBuffer::allocate(size_t(256) << 20));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  StatusOr<DeviceMemoryInfo> after = deviceMemoryInfo();
  ASSERT_TRUE(after.ok()) << after.message();
  EXPECT_GT(after->freeBytes, before->freeBytes - (int64_t(64) << 20));
  // The byte count gnn-run checks before a build is what a graph keeps.
  for (bool wide : {false, true}) {
    gnn::HostGraph host = gnn::generatePowerLaw(3000, 40000, 5);
    GraphBuildOptions options;
    options.force64 = wide;
    StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host, nullptr, options);
    ASSERT_TRUE(g.ok()) << g.message();
    StatusOr<GraphDeviceBytes> want = graphDeviceBytes(
        host.numNodes, host.numEdges(), (*g)->indexBits(), false);
    ASSERT_TRUE(want.ok()) << want.message();
    EXPECT_EQ(static_cast<int64_t>((*g)->deviceBytes()), want->kept);
  }
}

/// One Executable on two streams at once (from two host threads), with
/// caller workspaces and with its own per-stream ones: every run gives the
/// one-stream result; a misaligned workspace is refused.
TEST(GpuProgram, WorkspacesAndConcurrentStreams) {
  REQUIRE_GPU();
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex =
      Executable::create(handwrittenProgram(), compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  gnn::HostGraph host = gnn::generatePowerLaw(20000, 400000, 3);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  int64_t n = host.numNodes;
  StatusOr<size_t> bytes = (*ex)->workspaceBytes(**g);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  EXPECT_EQ(*bytes, (size_t(n) * 32 * 4 + 255) / 256 * 256); // the one temp h
  HandwrittenInputs in;
  ASSERT_NO_FATAL_FAILURE(in.make(host, 5));
  auto output = [&]() { return std::move(*DeviceBuffer::allocate(n * 16 * 4)); };
  auto download = [&](const DeviceBuffer &b) {
    std::vector<float> v(n * 16);
    EXPECT_TRUE(b.download(v.data(), v.size() * 4).ok());
    return v;
  };
  // The one-stream result, with the Executable's own workspace.
  DeviceBuffer y0 = output();
  Status s = (*ex)->run(**g, in.bindings(y0.data()));
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> want = download(y0);

  DeviceBuffer ws = std::move(*DeviceBuffer::allocate(*bytes + 256));
  s = (*ex)->run(**g, in.bindings(y0.data()), nullptr,
                 static_cast<char *>(ws.data()) + 4);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not aligned to 256 bytes"), std::string::npos)
      << s.message();

  for (bool own : {false, true}) {
    cudaStream_t streams[2];
    DeviceBuffer outs[2] = {output(), output()};
    DeviceBuffer spaces[2];
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking),
                cudaSuccess);
      if (!own)
        spaces[i] = std::move(*DeviceBuffer::allocate(*bytes));
    }
    // Allocations are ordered on the legacy stream, which the non-blocking
    // streams do not wait for.
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    Status results[2];
    auto work = [&](int i) {
      for (int rep = 0; rep < 20 && results[i].ok(); ++rep)
        results[i] = (*ex)->run(**g, in.bindings(outs[i].data()), streams[i],
                                own ? nullptr : spaces[i].data());
    };
    std::thread other(work, 1);
    work(0);
    other.join();
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(results[i].ok()) << results[i].message();
      ASSERT_EQ(cudaStreamSynchronize(streams[i]), cudaSuccess);
      std::vector<float> got = download(outs[i]);
      double worst = 0;
      for (size_t k = 0; k < got.size(); ++k)
        worst = std::max(worst, std::fabs(double(got[k]) - want[k]) /
                                    (1 + std::fabs(double(want[k]))));
      EXPECT_LT(worst, 1e-5) << "stream " << i << (own ? " (own workspace)" : "");
      cudaStreamDestroy(streams[i]);
    }
  }
}

/// The kernel the side-stream tests launch first: y[i] = 1 + i.
const std::string kFillA = R"cuda(
extern "C" __global__ void fill_a(float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 1.0f + i;
}
)cuda";

/// A launch beside the one before it (overlaps = 1) runs on the calling
/// thread's side stream; each thread's side stream (and its two events) is
/// destroyed when the thread ends: threads started and ended one after
/// another leave none behind, and each got the right results, run step by
/// step and replayed.
TEST(GpuProgram, SideStreamsEndWithTheirThreads) {
  REQUIRE_GPU();
  if (!environment().concurrentLaunches)
    GTEST_SKIP() << "GNNC_CONCURRENT_LAUNCHES=0";
  using namespace test;
  Program p;
  p.name = "beside";
  p.kernels = {"fill_a", "fill_b"};
  p.units.push_back(SourceUnit{{"fill_a", "fill_b"}, kFillA + R"cuda(
extern "C" __global__ void fill_b(float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * i;
}
)cuda"});
  p.buffers = {{"a", BufferRole::Output, DType::F32, *Formula::parse("nodes")},
               {"b", BufferRole::Output, DType::F32, *Formula::parse("nodes")}};
  LaunchStep first = launch("fill_a", "ceil_div(nodes, 256)", 256);
  first.args = {named(KernelArg::Kind::Buffer, "a"),
                integer(KernelArg::Kind::I64, "nodes")};
  LaunchStep second = launch("fill_b", "ceil_div(nodes, 256)", 256);
  second.args = {named(KernelArg::Kind::Buffer, "b"),
                 integer(KernelArg::Kind::I64, "nodes")};
  second.overlaps = 1;
  p.steps = {first, second};
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex = Executable::create(p, compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  gnn::HostGraph host = gnn::generatePowerLaw(1000, 5000, 7);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  int64_t n = host.numNodes;

  // Outputs of their own per thread, all alive to the end: a run on
  // buffers at addresses seen before would replay that run's captured
  // graph, which needs no side stream.
  std::vector<DeviceBuffer> outs;
  for (int i = 0; i < 8; ++i)
    outs.push_back(std::move(*DeviceBuffer::allocate(n * 4)));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  int64_t before = liveSideStreams();
  for (int t = 0; t < 4; ++t) {
    DeviceBuffer &a = outs[2 * t], &b = outs[2 * t + 1];
    std::vector<Status> results;
    int64_t during = -1;
    std::thread worker([&] {
      for (int rep = 0; rep < 3; ++rep) // step by step, captured, replayed
        results.push_back((*ex)->run(
            **g, {{"a", a.data()}, {"b", b.data()}}));
      during = liveSideStreams();
      (void)cudaDeviceSynchronize();
    });
    worker.join();
    for (const Status &s : results)
      ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(during, before + 1) << "thread " << t;
    EXPECT_EQ(liveSideStreams(), before) << "after thread " << t;
    std::vector<float> va(n), vb(n);
    ASSERT_TRUE(a.download(va.data(), n * 4).ok());
    ASSERT_TRUE(b.download(vb.data(), n * 4).ok());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(va[i], 1.0f + i) << i;
      ASSERT_EQ(vb[i], 2.0f * i) << i;
    }
  }
}

/// A row-split gemm (a weight gradient) beside the launch before it
/// (GemmStep::overlaps = 1): its sums and column sums and the launch's
/// output are right run step by step, captured and replayed, the same bits
/// every run.
TEST(GpuProgram, ARowSplitGemmRunsBesideALaunch) {
  REQUIRE_GPU();
  using namespace test;
  Program p;
  p.name = "weights_beside";
  p.kernels = {"fill_a"};
  p.units.push_back(SourceUnit{{"fill_a"}, kFillA});
  p.buffers = {
      {"x", BufferRole::Input, DType::F32, *Formula::parse("nodes * 64")},
      {"dy", BufferRole::Input, DType::F32, *Formula::parse("nodes * 32")},
      {"y", BufferRole::Output, DType::F32, *Formula::parse("nodes")},
      {"dw", BufferRole::Output, DType::F32, *Formula::parse("64 * 32")},
      {"db", BufferRole::Output, DType::F32, *Formula::parse("32")},
      {"p", BufferRole::Temp, DType::F64, *Formula::parse("16 * (32 * 64 + 32)")}};
  LaunchStep first = launch("fill_a", "ceil_div(nodes, 256)", 256);
  first.args = {named(KernelArg::Kind::Buffer, "y"),
                integer(KernelArg::Kind::I64, "nodes")};
  GemmStep g = weightGradient("dy", "x", "dw", 32, 64, "nodes", "p", 16);
  g.rowSums = "db";
  g.overlaps = 1;
  p.steps = {first, g};
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex = Executable::create(p, compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  gnn::HostGraph host = gnn::generatePowerLaw(5000, 20000, 3);
  StatusOr<std::unique_ptr<Graph>> graph = Graph::fromHost(host);
  ASSERT_TRUE(graph.ok()) << graph.message();
  int64_t n = host.numNodes;
  std::vector<float> x(n * 64), dy(n * 32);
  gnn::SplitMix64 rng(5);
  for (float &v : x) v = static_cast<float>(rng.uniform() - 0.5);
  for (float &v : dy) v = static_cast<float>(rng.uniform() - 0.5);
  std::vector<double> want(32 * 64, 0.0), wantSums(32, 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int i = 0; i < 32; ++i) {
      wantSums[i] += dy[r * 32 + i];
      for (int j = 0; j < 64; ++j)
        want[i * 64 + j] += double(dy[r * 32 + i]) * x[r * 64 + j];
    }
  DeviceBuffer dx = std::move(*DeviceBuffer::allocate(x.size() * 4));
  DeviceBuffer ddy = std::move(*DeviceBuffer::allocate(dy.size() * 4));
  DeviceBuffer dout = std::move(*DeviceBuffer::allocate(n * 4));
  DeviceBuffer ddw = std::move(*DeviceBuffer::allocate(32 * 64 * 4));
  DeviceBuffer ddb = std::move(*DeviceBuffer::allocate(32 * 4));
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
  ASSERT_TRUE(ddy.upload(dy.data(), dy.size() * 4).ok());
  std::vector<float> first0, firstSums;
  for (int rep = 0; rep < 3; ++rep) { // step by step, captured, replayed
    SCOPED_TRACE(rep);
    ASSERT_EQ(cudaMemset(ddw.data(), 0xff, 32 * 64 * 4), cudaSuccess);
    ASSERT_EQ(cudaMemset(dout.data(), 0xff, n * 4), cudaSuccess);
    Status st = (*ex)->run(**graph, {{"x", dx.data()},
                                     {"dy", ddy.data()},
                                     {"y", dout.data()},
                                     {"dw", ddw.data()},
                                     {"db", ddb.data()}});
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> got(32 * 64), sums(32), y(n);
    ASSERT_TRUE(ddw.download(got.data(), got.size() * 4).ok());
    ASSERT_TRUE(ddb.download(sums.data(), sums.size() * 4).ok());
    ASSERT_TRUE(dout.download(y.data(), y.size() * 4).ok());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], 1.0f + i) << i;
    for (size_t k = 0; k < got.size(); ++k)
      ASSERT_NEAR(got[k], want[k], 1e-5 * (1 + std::fabs(want[k]))) << k;
    for (int i = 0; i < 32; ++i)
      ASSERT_NEAR(sums[i], wantSums[i], 1e-5 * (1 + std::fabs(wantSums[i])))
          << i;
    if (rep == 0) {
      first0 = got;
      firstSums = sums;
    } else {
      EXPECT_EQ(got, first0);
      EXPECT_EQ(sums, firstSums);
    }
  }
}

/// Nested windows: fill_b (step 2) runs beside steps 0-1, twice (step 3)
/// beside steps 1-2, fill_b among them; both go to the second stream, in
/// the order they are forked, and the caller's stream waits for them before
/// step 4, which reads what they wrote (temps, whose memory the plan keeps
/// apart over the windows). Right run step by step, captured and replayed,
/// and with GNNC_CONCURRENT_LAUNCHES=0 in program order.
TEST(GpuProgram, NestedWindowsJoinBeforeTheirReader) {
  REQUIRE_GPU();
  using namespace test;
  Program p;
  p.name = "nested";
  p.kernels = {"fill_a", "fill_b", "twice", "sum3"};
  p.units.push_back(SourceUnit{{"fill_a", "fill_b", "twice", "sum3"},
                               kFillA + R"cuda(
extern "C" __global__ void fill_b(float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  // Long enough that a reader not waiting for it would see the old values.
  float v = 0.0f;
  for (long long k = 0; k < 4000 + (n & 1023); ++k)
    v += 1e-30f;
  if (i < n)
    y[i] = 2.0f * i + v;
}
extern "C" __global__ void twice(const float *x, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i];
}
extern "C" __global__ void sum3(const float *a, const float *b,
                                const float *c, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a[i] + b[i] + c[i];
}
)cuda"});
  p.buffers = {{"a", BufferRole::Temp, DType::F32, *Formula::parse("nodes")},
               {"b", BufferRole::Temp, DType::F32, *Formula::parse("nodes")},
               {"c", BufferRole::Temp, DType::F32, *Formula::parse("nodes")},
               {"f", BufferRole::Temp, DType::F32, *Formula::parse("nodes")},
               {"y", BufferRole::Output, DType::F32, *Formula::parse("nodes"),
                BufferUse::Result, 0}};
  auto step = [&](const char *kernel, std::vector<const char *> buffers) {
    LaunchStep l = launch(kernel, "ceil_div(nodes, 256)", 256);
    for (const char *b : buffers)
      l.args.push_back(named(KernelArg::Kind::Buffer, b));
    l.args.push_back(integer(KernelArg::Kind::I64, "nodes"));
    return l;
  };
  LaunchStep b = step("fill_b", {"b"}), f = step("twice", {"a", "f"});
  b.overlaps = 2;
  f.overlaps = 2;
  p.steps = {step("fill_a", {"a"}), step("twice", {"a", "c"}), b, f,
             step("sum3", {"c", "b", "f", "y"})};
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  ASSERT_EQ(p.overlapWindows().size(), 2u);
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex = Executable::create(p, compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  gnn::HostGraph host = gnn::generatePowerLaw(100000, 200000, 9);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  int64_t n = host.numNodes;
  DeviceBuffer y = std::move(*DeviceBuffer::allocate(n * 4));
  for (int rep = 0; rep < 4; ++rep) { // step by step, captured, replayed
    SCOPED_TRACE(rep);
    ASSERT_EQ(cudaMemset(y.data(), 0xff, n * 4), cudaSuccess);
    Status st = (*ex)->run(**g, {{"y", y.data()}});
    ASSERT_TRUE(st.ok()) << st.message();
    std::vector<float> got(n);
    ASSERT_TRUE(y.download(got.data(), n * 4).ok());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], 2.0f * (1.0f + i) + 2.0f * i + 2.0f * (1.0f + i))
          << i;
  }
}

/// A Program without cuSPARSE (so its repeated runs are replayed): x copied
/// into a temp h, h's rows scaled by 1/(1 + in-degree), y = h w (cuBLAS),
/// then y + 1.
Program replayedProgram() {
  Program p;
  p.name = "replayed";
  p.kernels = {"scale_rows", "add_one"};
  p.units.push_back(SourceUnit{{"scale_rows", "add_one"}, R"cuda(
extern "C" __global__ void scale_rows(float *h, const int *in_degree, long long n, int f) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n * f)
    h[i] *= 1.0f / (1.0f + in_degree[i / f]);
}
extern "C" __global__ void add_one(float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += 1.0f;
}
)cuda"});
  auto f = [](const char *t) { return *Formula::parse(t); };
  p.buffers = {{"x", BufferRole::Input, DType::F32, f("nodes * 32")},
               {"w", BufferRole::Input, DType::F32, f("32 * 16")},
               {"h", BufferRole::Temp, DType::F32, f("nodes * 32")},
               {"y", BufferRole::Output, DType::F32, f("nodes * 16")}};
  using namespace test;
  p.steps.push_back(CopyStep{"x", "h", f("nodes * 32")});
  LaunchStep scale = launch("scale_rows", "ceil_div(nodes * 32, 256)", 256);
  scale.args = {named(KernelArg::Kind::Buffer, "h"),
                named(KernelArg::Kind::Graph, "in_degree"),
                integer(KernelArg::Kind::I64, "nodes"),
                integer(KernelArg::Kind::I32, "32")};
  p.steps.push_back(scale);
  p.steps.push_back(GemmStep{"h", "w", "y", f("nodes"), f("16"), f("32"), false,
                             false, 1.0f, 0.0f});
  LaunchStep one = launch("add_one", "ceil_div(nodes * 16, 256)", 256);
  one.args = {named(KernelArg::Kind::Buffer, "y"),
              integer(KernelArg::Kind::I64, "nodes * 16")};
  p.steps.push_back(one);
  return p;
}

/// Repeated runs are captured once and replayed: bit for bit the step-by-step
/// run's results, reading the inputs as they are at the replay, and writing
/// where the run's own bindings say (another output, another graph: another
/// key, run step by step first); inside a capture of the caller's the steps
/// go into that capture.
/// replayedProgram() loaded and a power-law graph to run it on.
struct ReplayedCase {
  std::unique_ptr<Executable> ex;
  gnn::HostGraph host;
  std::unique_ptr<Graph> graph;
};
void loadReplayed(int64_t nodes, int64_t edges, uint64_t seed,
                  ReplayedCase &c) {
  Compiler compiler("");
  StatusOr<std::unique_ptr<Executable>> ex =
      Executable::create(replayedProgram(), compiler);
  ASSERT_TRUE(ex.ok()) << ex.message();
  c.ex = std::move(*ex);
  c.host = gnn::generatePowerLaw(nodes, edges, seed);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(c.host);
  ASSERT_TRUE(g.ok()) << g.message();
  c.graph = std::move(*g);
}

TEST(GpuProgram, RepeatedRunsReplayACapturedGraph) {
  REQUIRE_GPU();
  if (!environment().cudaGraphs)
    GTEST_SKIP() << "GNNC_CUDA_GRAPHS=0";
  ReplayedCase rc;
  ASSERT_NO_FATAL_FAILURE(loadReplayed(3000, 30000, 5, rc));
  std::unique_ptr<Executable> *ex = &rc.ex;
  std::unique_ptr<Graph> *g = &rc.graph;
  const gnn::HostGraph &host = rc.host;
  int64_t n = host.numNodes;
  std::vector<int64_t> inDeg(n, 0);
  for (int64_t d : host.dst)
    ++inDeg[d];
  std::vector<float> x(n * 32), w(32 * 16);
  gnn::SplitMix64 rng(3);
  for (float &v : w) v = static_cast<float>(rng.uniform() - 0.5);
  auto fillX = [&]() {
    for (float &v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
  };
  fillX();
  DeviceBuffer dx = std::move(*DeviceBuffer::allocate(x.size() * 4));
  DeviceBuffer dw = std::move(*DeviceBuffer::allocate(w.size() * 4));
  ASSERT_TRUE(dw.upload(w.data(), w.size() * 4).ok());
  DeviceBuffer y = std::move(*DeviceBuffer::allocate(n * 16 * 4));
  DeviceBuffer y2 = std::move(*DeviceBuffer::allocate(n * 16 * 4));
  auto bindings = [&](const DeviceBuffer &out) {
    return std::map<std::string, void *>{
        {"x", dx.data()}, {"w", dw.data()}, {"y", out.data()}};
  };
  auto download = [&](const DeviceBuffer &out) {
    std::vector<float> v(n * 16);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(out.download(v.data(), v.size() * 4).ok());
    return v;
  };
  auto expectNear = [&](const std::vector<float> &got, const char *what) {
    double worst = 0;
    for (int64_t r = 0; r < n; ++r)
      for (int c = 0; c < 16; ++c) {
        double want = 1;
        for (int k = 0; k < 32; ++k)
          want += double(x[r * 32 + k]) / (1.0 + inDeg[r]) * w[k * 16 + c];
        worst = std::max(worst, std::fabs(got[r * 16 + c] - want) /
                                    (1 + std::fabs(want)));
      }
    EXPECT_LT(worst, 1e-5) << what;
  };
  auto run = [&](const DeviceBuffer &out) {
    Status s = (*ex)->run(**g, bindings(out));
    ASSERT_TRUE(s.ok()) << s.message();
  };
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
  run(y); // step by step
  std::vector<float> first = download(y);
  expectNear(first, "step by step");
  EXPECT_EQ((*ex)->graphLaunches(), 0u);
  ASSERT_EQ(cudaMemset(y.data(), 0, n * 16 * 4), cudaSuccess);
  run(y); // captured, then launched
  EXPECT_EQ((*ex)->graphLaunches(), 1u);
  EXPECT_EQ(download(y), first);
  ASSERT_EQ(cudaMemset(y.data(), 0, n * 16 * 4), cudaSuccess);
  run(y); // replayed
  EXPECT_EQ((*ex)->graphLaunches(), 2u);
  EXPECT_EQ(download(y), first);
  // New input values: the replay reads them.
  fillX();
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
  run(y);
  EXPECT_EQ((*ex)->graphLaunches(), 3u);
  expectNear(download(y), "replayed on new inputs");
  // Another output: another key, step by step; y keeps what it had.
  std::vector<float> before = download(y);
  run(y2);
  EXPECT_EQ((*ex)->graphLaunches(), 3u);
  expectNear(download(y2), "another output");
  EXPECT_EQ(download(y), before);
  // Another graph of the same sizes' arrays elsewhere: another key.
  StatusOr<std::unique_ptr<Graph>> g2 = Graph::fromHost(host);
  ASSERT_TRUE(g2.ok()) << g2.message();
  ASSERT_EQ(cudaMemset(y.data(), 0, n * 16 * 4), cudaSuccess);
  Status s = (*ex)->run(**g2, bindings(y));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ((*ex)->graphLaunches(), 3u);
  EXPECT_EQ(download(y), before);
  // Inside a capture of the caller's (with a workspace of the caller's, as
  // PyTorch's ops give, so that nothing is allocated in the capture):
  // captured there step by step.
  StatusOr<size_t> bytes = (*ex)->workspaceBytes(**g);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  DeviceBuffer ws = std::move(*DeviceBuffer::allocate(*bytes));
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  ASSERT_EQ(cudaMemset(y.data(), 0, n * 16 * 4), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  s = (*ex)->run(**g, bindings(y), stream, ws.data());
  cudaGraph_t captured = nullptr;
  cudaError_t ended = cudaStreamEndCapture(stream, &captured);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(ended, cudaSuccess);
  EXPECT_EQ((*ex)->graphLaunches(), 3u);
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(captured, nullptr, &nodes), cudaSuccess);
  EXPECT_GE(nodes, 4u); // the copy, two kernels and the GEMM's
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, captured, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(download(y), before);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(captured);
  cudaStreamDestroy(stream);
}

TEST(GpuProgram, GuardedRunsReplayTheirChangeCheck) {
  // A run with a RunGuard (the ops' change check of a cached graph): the
  // compare before the steps and the NaN fill after them are part of the
  // run, so a replayed run checks and fills as a run step by step does.
  REQUIRE_GPU();
  if (!environment().cudaGraphs)
    GTEST_SKIP() << "GNNC_CUDA_GRAPHS=0";
  ReplayedCase rc;
  ASSERT_NO_FATAL_FAILURE(loadReplayed(500, 4000, 9, rc));
  std::unique_ptr<Executable> *ex = &rc.ex;
  std::unique_ptr<Graph> *g = &rc.graph;
  int64_t n = rc.host.numNodes;
  std::vector<float> x(n * 32, 0.25f), w(32 * 16, 0.5f);
  DeviceBuffer dx = std::move(*DeviceBuffer::allocate(x.size() * 4));
  DeviceBuffer dw = std::move(*DeviceBuffer::allocate(w.size() * 4));
  DeviceBuffer y = std::move(*DeviceBuffer::allocate(n * 16 * 4));
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
  ASSERT_TRUE(dw.upload(w.data(), w.size() * 4).ok());
  // The "tensor" and its copy: 1,001 bytes (words and a tail).
  std::vector<unsigned char> bytes(1001, 7);
  DeviceBuffer now = std::move(*DeviceBuffer::allocate(bytes.size()));
  DeviceBuffer copy = std::move(*DeviceBuffer::allocate(bytes.size()));
  ASSERT_TRUE(now.upload(bytes.data(), bytes.size()).ok());
  ASSERT_TRUE(copy.upload(bytes.data(), bytes.size()).ok());
  StatusOr<std::unique_ptr<HostFlag>> flag = HostFlag::create();
  ASSERT_TRUE(flag.ok()) << flag.message();
  RunGuard guard;
  guard.flag = (*flag)->word();
  guard.compare.push_back({now.data(), copy.data(), bytes.size()});
  guard.poison.push_back({y.data(), n * 16, DType::F32});
  std::map<std::string, void *> bindings{
      {"x", dx.data()}, {"w", dw.data()}, {"y", y.data()}};
  auto run = [&] {
    ASSERT_EQ(cudaMemset(y.data(), 0, n * 16 * 4), cudaSuccess);
    Status s = (*ex)->run(**g, bindings, nullptr, nullptr, &guard);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  };
  auto nans = [&] {
    std::vector<float> v(n * 16);
    EXPECT_TRUE(y.download(v.data(), v.size() * 4).ok());
    return std::count_if(v.begin(), v.end(),
                         [](float f) { return std::isnan(f); });
  };
  for (int i = 0; i < 3; ++i) { // step by step, captured, replayed
    run();
    EXPECT_EQ((*flag)->read(), 0u) << "run " << i;
    EXPECT_EQ(nans(), 0) << "run " << i;
  }
  EXPECT_EQ((*ex)->graphLaunches(), 2u);
  // The tensor changes in its last byte (the compare's tail): the replayed
  // run sets the flag and fills the result.
  bytes.back() = 8;
  ASSERT_TRUE(now.upload(bytes.data(), bytes.size()).ok());
  run();
  EXPECT_EQ((*ex)->graphLaunches(), 3u);
  EXPECT_EQ((*flag)->read(), 1u);
  EXPECT_EQ(nans(), n * 16);
  // A guard is part of the key: the same run without one is another key,
  // step by step, and fills nothing.
  ASSERT_EQ(cudaMemset(y.data(), 0, n * 16 * 4), cudaSuccess);
  ASSERT_TRUE((*ex)->run(**g, bindings).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ((*ex)->graphLaunches(), 3u);
  EXPECT_EQ(nans(), 0);
}

TEST(GpuProgram, ManyKeysInTurnKeepTheirReplays) {
  // A model of many layers of one function calls one Executable with a key
  // per layer, in turn, step after step: 40 keys (more than the 16 kept
  // before, a whole cycle between a key's first and second run) are each
  // captured on their second run and replayed from then on; bitwise the
  // step-by-step results. More keys in turn than are kept (kReplays = 64)
  // would capture on every run: such an Executable runs step by step.
  REQUIRE_GPU();
  if (!environment().cudaGraphs)
    GTEST_SKIP() << "GNNC_CUDA_GRAPHS=0";
  auto cycle = [](int keys, ReplayedCase &rc,
                  std::vector<DeviceBuffer> &outs, DeviceBuffer &dx,
                  DeviceBuffer &dw) {
    for (int k = 0; k < keys; ++k) {
      std::map<std::string, void *> b{
          {"x", dx.data()}, {"w", dw.data()}, {"y", outs[k].data()}};
      Status s = rc.ex->run(*rc.graph, b);
      ASSERT_TRUE(s.ok()) << s.message();
    }
  };
  for (int keys : {40, 70}) {
    SCOPED_TRACE(keys);
    ReplayedCase rc;
    ASSERT_NO_FATAL_FAILURE(loadReplayed(500, 4000, 11, rc));
    int64_t n = rc.host.numNodes;
    std::vector<float> x(n * 32), w(32 * 16);
    gnn::SplitMix64 rng(5);
    for (float &v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
    for (float &v : w) v = static_cast<float>(rng.uniform() - 0.5);
    DeviceBuffer dx = std::move(*DeviceBuffer::allocate(x.size() * 4));
    DeviceBuffer dw = std::move(*DeviceBuffer::allocate(w.size() * 4));
    ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
    ASSERT_TRUE(dw.upload(w.data(), w.size() * 4).ok());
    std::vector<DeviceBuffer> outs;
    for (int k = 0; k < keys; ++k)
      outs.push_back(std::move(*DeviceBuffer::allocate(n * 16 * 4)));
    auto download = [&](int k) {
      std::vector<float> v(n * 16);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_TRUE(outs[k].download(v.data(), v.size() * 4).ok());
      return v;
    };
    ASSERT_NO_FATAL_FAILURE(cycle(keys, rc, outs, dx, dw)); // step by step
    EXPECT_EQ(rc.ex->graphLaunches(), 0u);
    std::vector<float> first = download(0), last = download(keys - 1);
    for (int k = 0; k < keys; ++k)
      ASSERT_EQ(cudaMemset(outs[k].data(), 0, n * 16 * 4), cudaSuccess);
    ASSERT_NO_FATAL_FAILURE(cycle(keys, rc, outs, dx, dw)); // captured
    ASSERT_NO_FATAL_FAILURE(cycle(keys, rc, outs, dx, dw)); // replayed
    EXPECT_EQ(download(0), first);
    EXPECT_EQ(download(keys - 1), last);
    if (keys == 40) {
      EXPECT_EQ(rc.ex->graphLaunches(), 80u);
    } else {
      // 65 captures, each launched once: step by step from then on.
      EXPECT_EQ(rc.ex->graphLaunches(), 65u);
    }
  }
}

TEST(GpuProgram, RunBoundTakesThePointersInBoundNamesOrder) {
  // runBound (one pointer per input and output buffer, in boundNames'
  // order: the PyTorch ops' per-call path) runs what run() runs with the
  // same bindings by name, bitwise, and replays alike; a wrong count is
  // refused.
  REQUIRE_GPU();
  ReplayedCase rc;
  ASSERT_NO_FATAL_FAILURE(loadReplayed(800, 6000, 3, rc));
  const std::vector<std::string> &names = rc.ex->boundNames();
  std::vector<std::string> expected;
  for (const BufferDecl &b : rc.ex->program().buffers)
    if (b.role != BufferRole::Temp)
      expected.push_back(b.name);
  EXPECT_EQ(names, expected);
  int64_t n = rc.host.numNodes;
  std::vector<float> x(n * 32), w(32 * 16);
  gnn::SplitMix64 rng(9);
  for (float &v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
  for (float &v : w) v = static_cast<float>(rng.uniform() - 0.5);
  DeviceBuffer dx = std::move(*DeviceBuffer::allocate(x.size() * 4));
  DeviceBuffer dw = std::move(*DeviceBuffer::allocate(w.size() * 4));
  DeviceBuffer byName = std::move(*DeviceBuffer::allocate(n * 16 * 4));
  DeviceBuffer bound = std::move(*DeviceBuffer::allocate(n * 16 * 4));
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
  ASSERT_TRUE(dw.upload(w.data(), w.size() * 4).ok());
  std::map<std::string, void *> b{
      {"x", dx.data()}, {"w", dw.data()}, {"y", byName.data()}};
  ASSERT_TRUE(rc.ex->run(*rc.graph, b).ok());
  std::vector<void *> pointers;
  for (const std::string &name : names)
    pointers.push_back(name == "y" ? bound.data() : b.at(name));
  for (int i = 0; i < 3; ++i) { // step by step, captured, replayed
    Status s = rc.ex->runBound(*rc.graph, pointers);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  if (environment().cudaGraphs)
    EXPECT_EQ(rc.ex->graphLaunches(), 2u);
  std::vector<float> a(n * 16), c(n * 16);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(byName.download(a.data(), a.size() * 4).ok());
  ASSERT_TRUE(bound.download(c.data(), c.size() * 4).ok());
  EXPECT_EQ(a, c);
  pointers.pop_back();
  Status s = rc.ex->runBound(*rc.graph, pointers);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("pointers were given"), std::string::npos)
      << s.message();
}

TEST(GpuModule, LargeDynamicSharedMemoryAndKernelInfo) {
  REQUIRE_GPU();
  Compiler compiler("");
  CompileRequest r;
  r.name = "bigshared";
  r.source = R"cuda(
extern "C" __global__ void fill(float *out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
)cuda";
  StatusOr<CompileResult> c = compiler.compile(r);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->cubin->arch, "sm_" + std::to_string((*CudaDriver::get())->computeCapability()));
  StatusOr<std::unique_ptr<Module>> m = Module::load(*c->cubin);
  ASSERT_TRUE(m.ok()) << m.message();
  StatusOr<Kernel> k = (*m)->kernel("fill");
  ASSERT_TRUE(k.ok()) << k.message();
  EXPECT_GT(k->info().registers, 0);
  EXPECT_EQ(k->info().localBytes, 0) << "no spills";
  int n = 100 * 1024 / 4;
  DeviceBuffer out = std::move(*DeviceBuffer::allocate(n * 4));
  void *ptr = out.data();
  void *args[] = {&ptr, &n};
  // Without the opt-in, 100 KB of dynamic shared memory is refused.
  Status refused = k->launch(1, 1, 1, 256, 1, 1, n * 4, nullptr, args);
  EXPECT_FALSE(refused.ok());
  ASSERT_TRUE(k->allowDynamicShared(n * 4).ok());
  Status s = k->launch(1, 1, 1, 256, 1, 1, n * 4, nullptr, args);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<float> host(n);
  ASSERT_TRUE(out.download(host.data(), n * 4).ok());
  EXPECT_EQ(host[0], n - 1);
  EXPECT_EQ(host[n - 1], 0);
  EXPECT_FALSE((*m)->kernel("nope").ok());
}

TEST(GpuLibrary, SpmmMatchesCpuForUnweightedAndWeighted) {
  REQUIRE_GPU();
  gnn::HostGraph host = gnn::generatePowerLaw(3000, 50000, 2);
  StatusOr<std::unique_ptr<Graph>> g = Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  const int F = 64;
  int64_t n = host.numNodes, e = host.numEdges();
  std::vector<float> x(n * F), w(e), y(n * F);
  gnn::SplitMix64 rng(3);
  for (float &v : x) v = static_cast<float>(rng.uniform() - 0.5);
  for (float &v : w) v = static_cast<float>(rng.uniform());
  DeviceBuffer dx = std::move(*DeviceBuffer::allocate(x.size() * 4));
  DeviceBuffer dw = std::move(*DeviceBuffer::allocate(w.size() * 4));
  DeviceBuffer dy = std::move(*DeviceBuffer::allocate(y.size() * 4));
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 4).ok());
  ASSERT_TRUE(dw.upload(w.data(), w.size() * 4).ok());
  for (bool weighted : {false, true, false}) {
    Status s = spmmCsr(**g, weighted ? dw.as<float>() : nullptr, dx.as<float>(),
                       dy.as<float>(), F, 1.0f, 0.0f, nullptr);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(dy.download(y.data(), y.size() * 4).ok());
    std::vector<double> want(n * F, 0.0);
    for (int64_t i = 0; i < e; ++i)
      for (int c = 0; c < F; ++c)
        want[host.dst[i] * F + c] += (weighted ? w[i] : 1.0) * x[host.src[i] * F + c];
    double worst = 0;
    for (int64_t i = 0; i < n * F; ++i)
      worst = std::max(worst, std::fabs(y[i] - want[i]) / (1 + std::fabs(want[i])));
    EXPECT_LT(worst, 1e-4) << (weighted ? "weighted" : "unweighted");
  }
}

/// dW = Xᵀ dY over many rows, as a weight gradient sums over every node:
/// the row split in double precision agrees with a double sum to f32
/// rounding (an f32 GEMM over a million rows does not), is bitwise equal run
/// to run, and handles no rows, ragged tiles and beta; A's column sums (a
/// bias gradient beside its weight's) likewise, C unchanged by them.
TEST(GpuLibrary, GemmRowSplitIsPreciseAndDeterministic) {
  REQUIRE_GPU();
  // (k, m, n, chunks): many slices of 64 x 64, the compiler's 32 slices of
  // 128 x 256 (several tiles and warps), ragged 17 x 17; then C with a side
  // of at most 16 (the narrow kernel): GINE's edge projection both ways
  // round (4 x 64 and 64 x 4), ragged 37 x 5, 16 x 200 and 130 x 9 (the
  // wide side over several blocks), 1 x 1, no rows, and slices fewer than
  // chunks with a short last one.
  for (auto [k, m, n, chunks] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{300000, 64, 64, 1024},
        {40000, 128, 256, 32},
        {5000, 17, 17, 20},
        {76008, 4, 64, 256},
        {76008, 64, 4, 256},
        {70001, 37, 5, 274},
        {1000, 16, 200, 4},
        {999, 130, 9, 7},
        {5, 1, 1, 3},
        {0, 16, 8, 1},
        {10, 3, 7, 4}}) {
    SCOPED_TRACE(k);
    std::vector<float> a(std::max<int64_t>(k * m, 1)), b(std::max<int64_t>(k * n, 1));
    gnn::SplitMix64 rng(11);
    for (float &v : a) v = static_cast<float>(rng.uniform() - 0.5);
    for (float &v : b) v = static_cast<float>(rng.uniform() - 0.5);
    DeviceBuffer da = std::move(*DeviceBuffer::allocate(a.size() * 4));
    DeviceBuffer db = std::move(*DeviceBuffer::allocate(b.size() * 4));
    DeviceBuffer dc = std::move(*DeviceBuffer::allocate(m * n * 4));
    // (Room for A's column sums after C's in every slice.)
    DeviceBuffer dp =
        std::move(*DeviceBuffer::allocate(chunks * (m * n + m) * 8));
    DeviceBuffer ds = std::move(*DeviceBuffer::allocate(m * 4));
    ASSERT_TRUE(da.upload(a.data(), a.size() * 4).ok());
    ASSERT_TRUE(db.upload(b.data(), b.size() * 4).ok());
    std::vector<float> c0(m * n, 1.5f);
    ASSERT_TRUE(dc.upload(c0.data(), c0.size() * 4).ok());
    // C = 2 Aᵀ B + 0.5 C (C starts at 1.5); A's column sums as they are.
    std::vector<double> want(m * n, 0.75), wantSums(m, 0.0);
    for (int64_t r = 0; r < k; ++r)
      for (int64_t i = 0; i < m; ++i) {
        wantSums[i] += a[r * m + i];
        for (int64_t j = 0; j < n; ++j)
          want[i * n + j] += 2.0 * a[r * m + i] * b[r * n + j];
      }
    // Without and with the column sums (a bias gradient beside its
    // weight's): C the same bits either way.
    std::vector<float> plain;
    for (bool withSums : {false, true}) {
      SCOPED_TRACE(withSums ? "with row sums" : "without");
      std::vector<float> first, c(m * n), firstSums, sums(m, -1.0f);
      for (int run = 0; run < 2; ++run) {
        ASSERT_TRUE(dc.upload(c0.data(), c0.size() * 4).ok());
        ASSERT_TRUE(ds.upload(sums.data(), m * 4).ok());
        Status s = gemmRowSplit(m, n, k, chunks, 2.0, da.as<float>(),
                                db.as<float>(), 0.5, dc.as<float>(),
                                static_cast<double *>(dp.data()), nullptr,
                                withSums ? ds.as<float>() : nullptr);
        ASSERT_TRUE(s.ok()) << s.message();
        ASSERT_TRUE(dc.download(c.data(), c.size() * 4).ok());
        ASSERT_TRUE(ds.download(sums.data(), m * 4).ok());
        if (run == 0) {
          first = c;
          firstSums = sums;
        }
      }
      EXPECT_EQ(first, c);
      EXPECT_EQ(firstSums, sums);
      double worst = 0;
      for (int64_t i = 0; i < m * n; ++i)
        worst = std::max(worst, std::fabs(c[i] - want[i]) / (1 + std::fabs(want[i])));
      EXPECT_LT(worst, 1e-6);
      if (withSums) {
        EXPECT_EQ(plain, c);
        double worstSum = 0;
        for (int64_t i = 0; i < m; ++i)
          worstSum = std::max(worstSum, std::fabs(sums[i] - wantSums[i]) /
                                            (1 + std::fabs(wantSums[i])));
        EXPECT_LT(worstSum, 1e-6);
      } else {
        plain = c;
        // (Untouched without them.)
        EXPECT_EQ(sums, std::vector<float>(m, -1.0f));
      }
    }
  }
}

/// gemm against a double product for every pair of transposes, ragged and
/// wide shapes, alpha and beta, a second call with other data, operands
/// starting 4 bytes past an alignment boundary (a tensor view's offset),
/// and k = 0 (C = beta C).
TEST(GpuLibrary, GemmMatchesADoubleProductForEveryLayout) {
  REQUIRE_GPU();
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1000, 64, 64},
                         {37, 5, 3},
                         {300, 256, 129},
                         {9, 7, 0}})
    for (int trans = 0; trans < 4; ++trans)
      for (int64_t offset : {0, 1}) {
        bool transA = trans & 1, transB = trans & 2;
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" +
                     std::to_string(k) + (transA ? " transA" : "") +
                     (transB ? " transB" : "") + " offset " +
                     std::to_string(offset));
        std::vector<float> a(m * k + offset), b(k * n + offset), c(m * n);
        gnn::SplitMix64 rng(7 + trans);
        DeviceBuffer da = std::move(*DeviceBuffer::allocate(a.size() * 4 + 4));
        DeviceBuffer db = std::move(*DeviceBuffer::allocate(b.size() * 4 + 4));
        DeviceBuffer dc =
            std::move(*DeviceBuffer::allocate((m * n + offset) * 4 + 4));
        float *pc = dc.as<float>() + offset;
        for (int call = 0; call < 2; ++call) {
          for (float &v : a) v = static_cast<float>(rng.uniform() - 0.5);
          for (float &v : b) v = static_cast<float>(rng.uniform() - 0.5);
          std::vector<float> c0(m * n);
          for (float &v : c0) v = static_cast<float>(rng.uniform());
          ASSERT_TRUE(da.upload(a.data(), a.size() * 4).ok());
          ASSERT_TRUE(db.upload(b.data(), b.size() * 4).ok());
          ASSERT_EQ(cudaMemcpy(pc, c0.data(), m * n * 4, cudaMemcpyHostToDevice),
                    cudaSuccess);
          double alpha = call ? 1.0 : 2.0, beta = call ? 0.0 : 0.5;
          // A is m x k (k x m stored with transA), B k x n (n x k with
          // transB), both starting `offset` floats in.
          const float *pa = da.as<float>() + offset, *pb = db.as<float>() + offset;
          Status st = gemm(transA, transB, m, n, k, float(alpha), pa, pb,
                           float(beta), pc, nullptr);
          ASSERT_TRUE(st.ok()) << st.message();
          ASSERT_EQ(cudaMemcpy(c.data(), pc, m * n * 4, cudaMemcpyDeviceToHost),
                    cudaSuccess);
          double worst = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double sum = 0;
              for (int64_t r = 0; r < k; ++r)
                sum += double(a[offset + (transA ? r * m + i : i * k + r)]) *
                       b[offset + (transB ? j * k + r : r * n + j)];
              double want = alpha * sum + beta * c0[i * n + j];
              worst = std::max(worst, std::fabs(c[i * n + j] - want) /
                                          (1 + std::fabs(want)));
            }
          EXPECT_LT(worst, 1e-5) << "call " << call;
        }
      }
}

/// C = A op(B) + bias (cuBLASLt's bias epilogue): against a double product
/// plus the bias, B stored k x n or n x k (a Linear's weight), ragged
/// sizes, a second call on a cached plan with another bias, and k = 0 (C =
/// the bias on every row).
/// A (m x k) and B (k x n, or n x k) of uniform values in [-0.5, 0.5) drawn
/// from `rng` in that order, at least one element each (k may be 0).
std::pair<std::vector<float>, std::vector<float>>
randomGemmOperands(int64_t m, int64_t n, int64_t k, gnn::SplitMix64 &rng) {
  std::vector<float> a(std::max<int64_t>(m * k, 1)),
      b(std::max<int64_t>(k * n, 1));
  for (float &v : a)
    v = static_cast<float>(rng.uniform() - 0.5);
  for (float &v : b)
    v = static_cast<float>(rng.uniform() - 0.5);
  return {a, b};
}

/// gemmBias of host matrices (`relu` its ReLU epilogue): C, downloaded.
std::vector<float> gemmBiasOf(bool transB, int64_t m, int64_t n, int64_t k,
                              const std::vector<float> &a,
                              const std::vector<float> &b,
                              const std::vector<float> &bias, bool relu) {
  DeviceBuffer da = std::move(*DeviceBuffer::allocate(a.size() * 4));
  DeviceBuffer db = std::move(*DeviceBuffer::allocate(b.size() * 4));
  DeviceBuffer dbias = std::move(*DeviceBuffer::allocate(n * 4));
  DeviceBuffer dc = std::move(*DeviceBuffer::allocate(m * n * 4));
  std::vector<float> c(m * n);
  EXPECT_TRUE(da.upload(a.data(), a.size() * 4).ok());
  EXPECT_TRUE(db.upload(b.data(), b.size() * 4).ok());
  EXPECT_TRUE(dbias.upload(bias.data(), n * 4).ok());
  Status s = gemmBias(transB, m, n, k, da.as<float>(), db.as<float>(),
                      dbias.as<float>(), dc.as<float>(), nullptr, relu);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(dc.download(c.data(), c.size() * 4).ok());
  return c;
}

TEST(GpuLibrary, GemmBiasAddsTheBiasToEveryRow) {
  REQUIRE_GPU();
  for (auto [m, n, k, transB] :
       {std::tuple<int64_t, int64_t, int64_t, bool>{1000, 256, 128, true},
        {1000, 256, 128, false},
        {37, 5, 3, true},
        {37, 5, 3, false},
        {9, 7, 0, true}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" +
                 std::to_string(k) + (transB ? " transB" : ""));
    gnn::SplitMix64 rng(5);
    auto [a, b] = randomGemmOperands(m, n, k, rng);
    std::vector<float> bias(n);
    for (int call = 0; call < 2; ++call) {
      for (float &v : bias) v = static_cast<float>(rng.uniform() + call);
      std::vector<float> c = gemmBiasOf(transB, m, n, k, a, b, bias, false);
      double worst = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = bias[j];
          for (int64_t r = 0; r < k; ++r)
            want += double(a[i * k + r]) *
                    (transB ? b[j * k + r] : b[r * n + j]);
          worst = std::max(worst, std::fabs(c[i * n + j] - want) /
                                      (1 + std::fabs(want)));
        }
      EXPECT_LT(worst, 1e-5) << "call " << call;
    }
  }
}

// With `relu`, torch.relu of the same sum in the epilogue: 0 where the sum
// is <= 0 (bias of both signs, so both sides occur), the sum elsewhere, and
// a NaN row (a NaN in A) NaN throughout, as torch.relu keeps it.
TEST(GpuLibrary, GemmBiasReluIsTorchReluOfTheSum) {
  REQUIRE_GPU();
  for (auto [m, n, k, transB] :
       {std::tuple<int64_t, int64_t, int64_t, bool>{1000, 64, 64, true},
        {37, 5, 3, false},
        {9, 7, 0, true}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" +
                 std::to_string(k) + (transB ? " transB" : ""));
    gnn::SplitMix64 rng(7);
    auto [a, b] = randomGemmOperands(m, n, k, rng);
    std::vector<float> bias(n);
    for (float &v : bias)
      v = static_cast<float>(rng.uniform() - 0.5);
    if (k > 0)
      a[1 * k] = std::nanf("");
    std::vector<float> c = gemmBiasOf(transB, m, n, k, a, b, bias, true);
    double worst = 0;
    int64_t zeros = 0, nans = 0, nanRow = k > 0 ? 1 : -1;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float got = c[i * n + j];
        if (i == nanRow) {
          nans += std::isnan(got);
          continue;
        }
        double sum = bias[j];
        for (int64_t r = 0; r < k; ++r)
          sum += double(a[i * k + r]) * (transB ? b[j * k + r] : b[r * n + j]);
        ASSERT_FALSE(std::isnan(got)) << i << ", " << j;
        if (sum <= 0) {
          // (a sum within rounding of 0 may land on either side)
          if (sum < -1e-5) {
            EXPECT_EQ(got, 0.0f) << i << ", " << j;
          }
          zeros += got == 0.0f;
          continue;
        }
        worst = std::max(worst, std::fabs(got - sum) / (1 + sum));
      }
    EXPECT_LT(worst, 1e-5);
    EXPECT_GT(zeros, 0);
    if (nanRow >= 0) {
      EXPECT_EQ(nans, n) << "a NaN sum must stay NaN";
    }
  }
}

} // namespace
