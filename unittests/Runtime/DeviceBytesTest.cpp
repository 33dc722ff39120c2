//===- DeviceBytesTest.cpp - device memory of graphs and Programs ---------===//
//
// Part of gnnc. On the CPU: the bytes a graph and a Program's buffers need
// on the device, for graphs far larger than any test machine holds.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/DeviceBytes.h"

#include <gtest/gtest.h>

using namespace gnn::runtime;

namespace {

/// A Program of f32 and f64 buffers sized by nodes and edges, as the
/// compiler writes it (a heavy-row partial-state buffer included); its two
/// temporaries are live at once, so the workspace holds both.
Program sample(int indexBits) {
  std::string text = R"json({
  "format": "gnnc-program",
  "version": 1,
  "name": "sample",
  "kernels": ["k"],
  "options": [],
  "index_bits": )json" + std::to_string(indexBits) +
                     R"json(,
  "buffers": [
    {"name": "arg1", "role": "input", "dtype": "f32", "size": "nodes * 128"},
    {"name": "arg2", "role": "input", "dtype": "f32", "size": "128 * 64"},
    {"name": "t0", "role": "temp", "dtype": "f64", "size": "edges * 4"},
    {"name": "t1", "role": "temp", "dtype": "f32", "size": "min(ceil_div(edges, 512), 8192) * 384"},
    {"name": "result0", "role": "output", "dtype": "f32", "size": "nodes * 64"}
  ],
  "steps": [
    {"op": "launch", "kernel": "k", "grid": ["1", "1", "1"], "block": [1, 1, 1],
     "shared": "0", "args": [{"buffer": "arg1"}, {"buffer": "t0"},
                            {"buffer": "t1"}, {"buffer": "result0"}]}
  ],
  "source": ""
}
)json";
  StatusOr<Program> p = Program::parse(text);
  EXPECT_TRUE(p.ok()) << p.message();
  return p.ok() ? *p : Program();
}

TEST(DeviceBytes, GraphArraysAndBuildPeak) {
  // 32-bit indices: 6 index arrays per edge, two row pointers, two int32
  // degrees and two index arrays (rows and columns by degree) per node (their
  // counts up to each power of two are on the host), graph_ptr (at most a
  // graph per node); the build adds two int64 edge lists, two int64 key
  // arrays, the sort's values and CUB's copy.
  StatusOr<GraphDeviceBytes> g = graphDeviceBytes(1000, 10000, 32, false);
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g->kept,
            6 * 4 * 10000 + 2 * 4 * 1001 + 8 * 1000 + 2 * 4 * 1000 + 4 * 1001);
  EXPECT_EQ(g->peak, g->kept + (16 + 16 + 4 + 20) * 10000);
  StatusOr<GraphDeviceBytes> wide = graphDeviceBytes(1000, 10000, 64, true);
  ASSERT_TRUE(wide.ok()) << wide.message();
  EXPECT_EQ(wide->kept,
            6 * 8 * 10000 + 2 * 8 * 1001 + 8 * 1000 + 2 * 8 * 1000 + 8 * 1001);
  EXPECT_EQ(wide->peak, wide->kept + (16 + 16 + 8 + 24) * 10000 + 8 * 1000);
  // A typed graph keeps one index more per edge (csr_type).
  StatusOr<GraphDeviceBytes> typed = graphDeviceBytes(1000, 10000, 32, false, true);
  ASSERT_TRUE(typed.ok()) << typed.message();
  EXPECT_EQ(typed->kept, g->kept + 4 * 10000);
  EXPECT_EQ(typed->peak, g->peak + 4 * 10000);
  StatusOr<GraphDeviceBytes> empty = graphDeviceBytes(0, 0, 32, false);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->kept, 12);
  // Many isolated nodes: the degree sorts' temporaries outgrow the edge
  // sort's.
  StatusOr<GraphDeviceBytes> sparse = graphDeviceBytes(100000, 10, 32, false);
  ASSERT_TRUE(sparse.ok());
  EXPECT_EQ(sparse->peak, sparse->kept + (16 + 16 + 4) * 10 + 2 * (4 + 4) * 100000);

  StatusOr<GraphDeviceBytes> huge =
      graphDeviceBytes(1000, int64_t(1) << 60, 64, false);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("a graph of 1000 nodes and 1152921504606846976 "
                                "edges needs more than 2^63 bytes"),
            std::string::npos)
      << huge.message();
  EXPECT_FALSE(graphDeviceBytes(-1, 0, 32, false).ok());
  EXPECT_FALSE(graphDeviceBytes(1, 1, 16, false).ok());
}

TEST(DeviceBytes, ProgramOnARedditSizedGraph) {
  // 232,965 nodes and 114,615,892 edges (Reddit), 32-bit indices.
  Program p = sample(32);
  FormulaScope scope{232965, 114615892, 1, 21657, 21657, 232965};
  StatusOr<ProgramDeviceBytes> b = programDeviceBytes(p, scope);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->inputs, 232965LL * 128 * 4 + 128 * 64 * 4);
  EXPECT_EQ(b->outputs, 232965LL * 64 * 4);
  // The f64 edge temp takes 8 bytes an element; the capped state buffer
  // 8192 * 384 floats.
  EXPECT_EQ(b->temps, 114615892LL * 4 * 8 + 8192LL * 384 * 4);
  // Each rounded up to the arena's 256-byte alignment.
  EXPECT_EQ(b->workspace, 3667708672LL + 8192LL * 384 * 4);
  EXPECT_EQ(b->total(), b->inputs + b->outputs + b->workspace);
  EXPECT_EQ(b->total(), 3859241472LL);

  StatusOr<DeviceMemoryNeed> need = deviceMemoryNeed(p, scope);
  ASSERT_TRUE(need.ok()) << need.message();
  // (The rows and columns by degree, then graph_ptr, added to the figures.)
  EXPECT_EQ(need->graph.kept, 2754508856LL + 2 * 4 * 232965LL + 4 * 232966LL);
  EXPECT_EQ(need->graph.peak, 9172998808LL + 2 * 4 * 232965LL + 4 * 232966LL);
  // The build's peak exceeds the kept graph plus the buffers here.
  EXPECT_EQ(need->total, 9172998808LL + 2 * 4 * 232965LL + 4 * 232966LL +
                             kDeviceReserveBytes);
  EXPECT_EQ(need->total, 9242903256LL);

  EXPECT_TRUE(checkDeviceMemory(*need, 80LL << 30, 80LL << 30, "run").ok());
  Status refused = checkDeviceMemory(*need, 8LL << 30, 80LL << 30,
                                     "running 'sample' on graph 'reddit'");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(),
            "running 'sample' on graph 'reddit': a graph of 232965 nodes and "
            "114615892 edges needs 9242903256 bytes of device memory (graph "
            "2757304440, 9175794392 while building; inputs and outputs "
            "178949888; workspace 3680291584; reserve 67108864) but the "
            "device has 8589934592 bytes free of 85899345920");
}

TEST(DeviceBytes, ProgramOnABillionEdgeGraphWith64BitIndices) {
  Program p = sample(64);
  FormulaScope scope{100000000, 3000000000LL, 1, 5000, 5000, 100000000};
  StatusOr<DeviceMemoryNeed> need = deviceMemoryNeed(p, scope);
  ASSERT_TRUE(need.ok()) << need.message();
  EXPECT_EQ(need->graph.kept,
            146400000016LL + 2 * 8 * 100000000LL + 8 * 100000001LL);
  EXPECT_EQ(need->graph.peak,
            338400000016LL + 2 * 8 * 100000000LL + 8 * 100000001LL);
  EXPECT_EQ(need->buffers.total(), 172812615680LL);
  EXPECT_EQ(need->total,
            338467108880LL + 2 * 8 * 100000000LL + 8 * 100000001LL);
  // More than an H100 or an H200 holds.
  EXPECT_FALSE(checkDeviceMemory(*need, 140LL << 30, 141LL << 30, "run").ok());
}

TEST(DeviceBytes, SizesThatOverflowAreErrors) {
  Program p = sample(64);
  FormulaScope scope{int64_t(1) << 58, 1, 1, 1, 1, 1};
  // nodes * 128 overflows in the formula itself.
  StatusOr<ProgramDeviceBytes> b = programDeviceBytes(p, scope);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.message().find("size of buffer 'arg1'"), std::string::npos)
      << b.message();
  // nodes * 64 elements fit int64, their bytes do not.
  scope.nodes = int64_t(1) << 56;
  Program small = p;
  small.buffers = {p.buffers[4]};
  small.steps.clear();
  b = programDeviceBytes(small, scope);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.message().find("buffer 'result0' of program 'sample' needs more "
                             "than 2^63 bytes"),
            std::string::npos)
      << b.message();
  StatusOr<DeviceMemoryNeed> need = deviceMemoryNeed(small, scope);
  EXPECT_FALSE(need.ok());
}

} // namespace
