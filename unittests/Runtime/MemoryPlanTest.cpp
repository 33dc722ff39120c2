//===- MemoryPlanTest.cpp - the memory planner on synthetic Programs ------===//
//
// Part of gnnc. CPU only: live ranges, sharing, alignment, the lower bound
// on chains, library steps as uses, errors.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/MemoryPlan.h"

#include <gtest/gtest.h>

#include <random>

using namespace gnn::runtime;

namespace {

Formula formula(const std::string &text) {
  StatusOr<Formula> f = Formula::parse(text);
  EXPECT_TRUE(f.ok()) << text;
  return f.ok() ? *f : Formula::constant(0);
}

BufferDecl buffer(const std::string &name, BufferRole role,
                  const std::string &size, DType dtype = DType::F32) {
  return {name, role, dtype, formula(size)};
}

LaunchStep launch(std::vector<std::string> buffers) {
  LaunchStep s;
  s.kernel = "k";
  for (int d = 0; d < 3; ++d)
    s.grid[d] = Formula::constant(1);
  s.sharedBytes = Formula::constant(0);
  for (const std::string &b : buffers) {
    KernelArg a;
    a.kind = KernelArg::Kind::Buffer;
    a.name = b;
    s.args.push_back(a);
  }
  return s;
}

/// A Program named `name` of the one kernel `k`, no buffers or steps yet.
Program empty(const std::string &name) {
  Program p;
  p.name = name;
  p.kernels = {"k"};
  p.units = {{{"k"}, ""}};
  return p;
}

/// x -> t0 -> t1 -> ... -> result0: step i reads the previous value and
/// writes t<i>, so t<i> is live at steps i and i + 1.
Program chain(const std::vector<std::string> &sizes) {
  Program p = empty("chain");
  p.buffers.push_back(buffer("x", BufferRole::Input, "nodes"));
  std::string prev = "x";
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string t = "t" + std::to_string(i);
    p.buffers.push_back(buffer(t, BufferRole::Temp, sizes[i]));
    p.steps.push_back(launch({prev, t}));
    prev = t;
  }
  p.buffers.push_back(buffer("result0", BufferRole::Output, "nodes"));
  p.steps.push_back(launch({prev, "result0"}));
  return p;
}

size_t align(size_t n) {
  return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

MemoryPlan plan(const Program &p, int64_t nodes = 1000, int64_t edges = 5000) {
  EXPECT_TRUE(p.verify().ok()) << p.verify().message();
  FormulaScope scope;
  scope.nodes = nodes;
  scope.edges = edges;
  StatusOr<MemoryPlan> m = planMemory(p, scope);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.message());
  return m.ok() ? *m : MemoryPlan();
}

/// The plan's temp for buffer `name`.
const MemoryPlan::Temp &temp(const Program &p, const MemoryPlan &m,
                             const std::string &name) {
  for (const MemoryPlan::Temp &t : m.temps)
    if (p.buffers[t.buffer].name == name)
      return t;
  static MemoryPlan::Temp none;
  ADD_FAILURE() << "no temp " << name;
  return none;
}

bool overlapInMemory(const MemoryPlan::Temp &a, const MemoryPlan::Temp &b) {
  return a.host == b.host && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

TEST(MemoryPlan, LiveRangesAreFirstAndLastUse) {
  Program p = chain({"nodes * 4", "nodes * 4", "nodes * 4"});
  std::vector<LiveRange> r = bufferLiveRanges(p);
  ASSERT_EQ(r.size(), p.buffers.size());
  // x, t0, t1, t2, result0
  EXPECT_EQ(r[0].first, 0u);
  EXPECT_EQ(r[0].last, 0u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(r[1 + i].used);
    EXPECT_EQ(r[1 + i].first, i);
    EXPECT_EQ(r[1 + i].last, i + 1);
  }
  EXPECT_EQ(r[4].first, 3u);
}

// A launch that overlaps the launches before it may run at any time over
// them: what it uses lives over its whole window, and no step of the window
// shares that memory. Here a (steps 0-1) and c (step 2) would share memory
// one after the other; with step 2 overlapping step 1 they live together.
// The window's other steps keep their own ranges (they run in order).
TEST(MemoryPlan, AnOverlappingLaunchWidensItsWindow) {
  Program p = empty("overlap");
  p.buffers = {buffer("x", BufferRole::Input, "nodes"),
               buffer("a", BufferRole::Temp, "nodes * 4"),
               buffer("c", BufferRole::Temp, "nodes * 4"),
               buffer("result0", BufferRole::Output, "nodes")};
  p.steps = {launch({"x", "a"}), launch({"a", "result0"}),
             launch({"x", "c"}), launch({"c", "result0"})};
  MemoryPlan apart = plan(p);
  EXPECT_TRUE(overlapInMemory(temp(p, apart, "a"), temp(p, apart, "c")));
  std::get<LaunchStep>(p.steps[2]).overlaps = 1;
  std::vector<LiveRange> r = bufferLiveRanges(p);
  EXPECT_EQ(r[1].first, 0u);
  EXPECT_EQ(r[1].last, 1u); // a: used at steps 0 and 1, on the caller's stream
  EXPECT_EQ(r[2].first, 1u); // c: used at step 2, whose window starts at 1
  EXPECT_EQ(r[2].last, 3u);
  EXPECT_EQ(r[0].first, 0u);
  EXPECT_EQ(r[0].last, 2u);
  MemoryPlan together = plan(p);
  EXPECT_FALSE(
      overlapInMemory(temp(p, together, "a"), temp(p, together, "c")));
}

// Nested windows: step 4 runs beside steps 1-3, step 3 beside step 2. Each
// overlapping step's buffers live over its own window; the temps of the
// steps that run in order in between (t, steps 1-2) keep their own range.
TEST(MemoryPlan, NestedWindowsWidenOnlyTheirOverlappingSteps) {
  Program p = empty("nested");
  p.buffers = {buffer("x", BufferRole::Input, "nodes"),
               buffer("t", BufferRole::Temp, "nodes * 4"),
               buffer("v", BufferRole::Temp, "nodes * 4"),
               buffer("w", BufferRole::Temp, "nodes * 4"),
               buffer("u", BufferRole::Temp, "nodes * 4"),
               buffer("result0", BufferRole::Output, "nodes")};
  p.steps = {launch({"x", "result0"}), launch({"x", "t"}),
             launch({"t", "result0"}), launch({"x", "v"}),
             launch({"x", "w"}), launch({"x", "u"}),
             launch({"u", "v", "w", "result0"})};
  std::get<LaunchStep>(p.steps[3]).overlaps = 1;
  std::get<LaunchStep>(p.steps[4]).overlaps = 3;
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  std::vector<LiveRange> r = bufferLiveRanges(p);
  EXPECT_EQ(r[1].first, 1u); // t: steps 1-2, in order
  EXPECT_EQ(r[1].last, 2u);
  EXPECT_EQ(r[2].first, 2u); // v: written beside step 2
  EXPECT_EQ(r[3].first, 1u); // w: written beside steps 1-3
  MemoryPlan m = plan(p);
  EXPECT_FALSE(overlapInMemory(temp(p, m, "t"), temp(p, m, "v")));
  EXPECT_FALSE(overlapInMemory(temp(p, m, "t"), temp(p, m, "w")));
  EXPECT_FALSE(overlapInMemory(temp(p, m, "v"), temp(p, m, "w")));
}

TEST(MemoryPlan, DisjointLiveRangesShare) {
  // t0 (steps 0-1) and t2 (steps 2-3) never live together: one offset.
  Program p = chain({"nodes * 64", "nodes * 64", "nodes * 64"});
  MemoryPlan m = plan(p);
  const auto &t0 = temp(p, m, "t0"), &t1 = temp(p, m, "t1"),
             &t2 = temp(p, m, "t2");
  EXPECT_EQ(t0.offset, t2.offset);
  EXPECT_FALSE(overlapInMemory(t0, t1));
  EXPECT_FALSE(overlapInMemory(t1, t2));
  EXPECT_EQ(m.unplannedBytes, 3u * 1000 * 64 * 4);
  EXPECT_EQ(m.arenaBytes, 2 * align(1000 * 64 * 4));
  EXPECT_EQ(m.arenaBytes, m.maxLiveBytes);
}

TEST(MemoryPlan, ReadAndWriteInOneStepDoNotShare) {
  // Step 1 reads t0 (its last use) and writes t1 (its first): in place would
  // be a hazard, so they must not overlap although t0 dies there.
  // (t0 dies before result0's first step: result0's bytes hold it.)
  Program p = chain({"nodes", "nodes"});
  MemoryPlan m = plan(p);
  EXPECT_FALSE(overlapInMemory(temp(p, m, "t0"), temp(p, m, "t1")));
  EXPECT_EQ(temp(p, m, "t0").host, 3u); // result0
  EXPECT_EQ(temp(p, m, "t1").host, MemoryPlan::Temp::kArena);
  EXPECT_EQ(m.arenaBytes, align(4000));
  EXPECT_EQ(m.maxLiveBytes, 2 * align(4000));
}

TEST(MemoryPlan, OverlappingLiveRangesDoNotShare) {
  // t0 is read again by the last step: live with every other temp.
  Program p = chain({"nodes * 8", "nodes * 8", "nodes * 8", "nodes * 8"});
  std::get<LaunchStep>(p.steps.back())
      .args.push_back(std::get<LaunchStep>(p.steps[0]).args[1]); // t0
  MemoryPlan m = plan(p);
  for (const MemoryPlan::Temp &t : m.temps) {
    if (t.buffer != temp(p, m, "t0").buffer) {
      EXPECT_FALSE(overlapInMemory(temp(p, m, "t0"), t)) << t.buffer;
    }
  }
  // t1 and t3 share; t0, t1, t2 are live together.
  EXPECT_EQ(temp(p, m, "t1").offset, temp(p, m, "t3").offset);
  EXPECT_EQ(m.arenaBytes, 3 * align(8000 * 4));
}

TEST(MemoryPlan, OffsetsAreAligned) {
  // 4 bytes, 260 bytes (two 256-byte units), 8 bytes as one i64.
  Program p = chain({"1", "65", "1"});
  p.buffers[3].dtype = DType::I64;
  MemoryPlan m = plan(p);
  for (const MemoryPlan::Temp &t : m.temps)
    EXPECT_EQ(t.offset % kArenaAlignment, 0u) << t.offset;
  EXPECT_EQ(temp(p, m, "t2").bytes, 8u);
  EXPECT_EQ(m.unplannedBytes, 4u + 260 + 8);
  EXPECT_EQ(m.arenaBytes % kArenaAlignment, 0u);
  // t1 and t0 (live together) in result0 (4000 bytes), at 0 and 512; t2,
  // live at result0's first step, in the arena.
  EXPECT_EQ(temp(p, m, "t1").host, 4u);
  EXPECT_EQ(temp(p, m, "t1").offset, 0u);
  EXPECT_EQ(temp(p, m, "t0").host, 4u);
  EXPECT_EQ(temp(p, m, "t0").offset, 512u);
  EXPECT_EQ(temp(p, m, "t2").host, MemoryPlan::Temp::kArena);
  EXPECT_EQ(m.arenaBytes, 256u);
  EXPECT_EQ(m.maxLiveBytes, 256u + 512);
}

TEST(MemoryPlan, ChainsNeedOnlyTheirLargestLiveSet) {
  // Sizes where placing the largest first is not enough ([4, 4, 1, 7]: the
  // 1 lands above both 4s), and pseudo-random chains.
  std::vector<std::vector<int>> cases = {
      {4, 4, 1, 7}, {1, 5, 5}, {7, 6, 3, 6, 3, 3, 6, 3, 3}, {3}, {2, 2, 2, 2}};
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::vector<int> sizes(2 + rng() % 9);
    for (int &s : sizes)
      s = 1 + rng() % 8;
    cases.push_back(sizes);
  }
  for (const std::vector<int> &sizes : cases) {
    std::vector<std::string> formulas;
    for (int s : sizes)
      formulas.push_back("nodes * " + std::to_string(64 * s));
    MemoryPlan m = plan(chain(formulas));
    size_t most = 0;
    for (size_t i = 0; i + 1 < sizes.size(); ++i)
      most = std::max(most, align(1000 * 256 * sizes[i]) +
                                align(1000 * 256 * sizes[i + 1]));
    if (sizes.size() == 1)
      most = align(1000 * 256 * sizes[0]);
    EXPECT_EQ(m.maxLiveBytes, most);
    EXPECT_EQ(m.arenaBytes, m.maxLiveBytes) << ::testing::PrintToString(sizes);
  }
}

TEST(MemoryPlan, LibraryStepsAreUses) {
  // w (steps 0-4, the SpMM's weights), s (0-1, the SpMM's input), y (1-2,
  // its output, the GEMM's a), c (2-3, the GEMM's c, copied), f (3-4, filled,
  // the copy's destination, the last launch's input).
  Program p = empty("library");
  p.buffers = {buffer("x", BufferRole::Input, "nodes * 16"),
               buffer("b", BufferRole::Input, "16 * 16"),
               buffer("w", BufferRole::Temp, "edges"),
               buffer("s", BufferRole::Temp, "nodes * 16"),
               buffer("y", BufferRole::Temp, "nodes * 16"),
               buffer("c", BufferRole::Temp, "nodes * 16"),
               buffer("f", BufferRole::Temp, "nodes * 16"),
               buffer("result0", BufferRole::Output, "nodes * 16")};
  p.steps.push_back(launch({"x", "s", "w"}));
  SpmmStep spmm;
  spmm.input = "s";
  spmm.output = "y";
  spmm.weights = "w";
  spmm.cols = Formula::constant(16);
  p.steps.push_back(spmm);
  GemmStep gemm;
  gemm.a = "y";
  gemm.b = "b";
  gemm.c = "c";
  gemm.m = formula("nodes");
  gemm.n = gemm.k = Formula::constant(16);
  p.steps.push_back(gemm);
  FillStep fill;
  fill.buffer = "f";
  p.steps.push_back(fill);
  CopyStep copy;
  copy.src = "c";
  copy.dst = "f";
  copy.elements = formula("nodes * 16");
  p.steps.push_back(copy);
  p.steps.push_back(launch({"f", "w", "result0"}));
  std::vector<LiveRange> r = bufferLiveRanges(p);
  auto range = [&](size_t i) { return std::make_pair(r[i].first, r[i].last); };
  EXPECT_EQ(range(2), std::make_pair(size_t(0), size_t(5))); // w
  EXPECT_EQ(range(3), std::make_pair(size_t(0), size_t(1))); // s
  EXPECT_EQ(range(4), std::make_pair(size_t(1), size_t(2))); // y
  EXPECT_EQ(range(5), std::make_pair(size_t(2), size_t(4))); // c
  EXPECT_EQ(range(6), std::make_pair(size_t(3), size_t(5))); // f
  MemoryPlan m = plan(p);
  const auto &w = temp(p, m, "w"), &s = temp(p, m, "s"), &y = temp(p, m, "y"),
             &c = temp(p, m, "c"), &f = temp(p, m, "f");
  for (const MemoryPlan::Temp *t : {&s, &y, &c, &f}) {
    EXPECT_FALSE(overlapInMemory(w, *t));
  }
  EXPECT_FALSE(overlapInMemory(s, y)); // SpMM input and output
  EXPECT_FALSE(overlapInMemory(y, c)); // GEMM a and c
  EXPECT_FALSE(overlapInMemory(c, f)); // copy source and destination
  // s is dead after the SpMM: c or f reuses it (both die before result0's
  // first step: s and then c are in result0's bytes).
  EXPECT_TRUE((s.host == c.host && s.offset == c.offset) ||
              (s.host == f.host && s.offset == f.offset));
  EXPECT_EQ(s.host, 7u);
  EXPECT_EQ(c.host, 7u);
  EXPECT_EQ(m.maxLiveBytes, align(5000 * 4) + 2 * align(1000 * 16 * 4));
  EXPECT_EQ(m.arenaBytes, align(5000 * 4) + align(1000 * 16 * 4));
}

TEST(MemoryPlan, UnusedTempsTakeNoSpace) {
  Program p = chain({"nodes"});
  p.buffers.push_back(buffer("unused", BufferRole::Temp, "nodes * 1024"));
  MemoryPlan m = plan(p);
  EXPECT_FALSE(temp(p, m, "unused").range.used);
  EXPECT_EQ(m.arenaBytes, align(4000));
  EXPECT_EQ(m.unplannedBytes, 4000u);
  std::string json = m.toJson(p);
  EXPECT_NE(json.find("\"name\": \"unused\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"offset\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"arena_bytes\": 4096"), std::string::npos) << json;
}

TEST(MemoryPlan, EmptyGraphAndNoTemps) {
  MemoryPlan m = plan(chain({"nodes * 4", "nodes * 4"}), 0, 0);
  EXPECT_EQ(m.arenaBytes, 0u);
  Program p = chain({});
  m = plan(p);
  EXPECT_TRUE(m.temps.empty());
  EXPECT_EQ(m.arenaBytes, 0u);
}

TEST(MemoryPlan, SizeErrors) {
  Program p = chain({"nodes - 2000"});
  FormulaScope scope;
  scope.nodes = 1000;
  StatusOr<MemoryPlan> m = planMemory(p, scope);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.message(), "buffer 't0' has negative size -1000");
  p = chain({"4611686018427387904"});
  m = planMemory(p, scope);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.message(), "buffer 't0' of 4611686018427387904 elements needs "
                         "more than 2^63 bytes");
  p = chain({"nodes / edges"});
  scope.edges = 0;
  m = planMemory(p, scope);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("size of buffer 't0'"), std::string::npos)
      << m.message();
}

TEST(MemoryPlan, CheckAndVerify) {
  std::vector<MemoryBlock> blocks = {{100, 2, 1}};
  EXPECT_FALSE(checkMemoryBlocks(blocks).ok());
  blocks = {{100, 0, 1}, {100, 1, 2}};
  ASSERT_TRUE(checkMemoryBlocks(blocks).ok());
  ArenaPlan bad{{0, 0}, 256};
  Status s = verifyArenaPlan(blocks, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "memory plan: blocks 0 and 1 are live together "
                         "(steps 1 to 1) but overlap in the arena");
  EXPECT_FALSE(verifyArenaPlan(blocks, ArenaPlan{{0, 128}, 512}).ok());
  EXPECT_FALSE(verifyArenaPlan(blocks, ArenaPlan{{0, 256}, 256}).ok());
  EXPECT_TRUE(verifyArenaPlan(blocks, ArenaPlan{{0, 256}, 512}).ok());
}

TEST(MemoryPlan, RandomIntervalsVerify) {
  // Arbitrary live ranges: always a valid plan between the lower bound and
  // one block per temp, and the same plan twice.
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    std::vector<MemoryBlock> blocks(1 + rng() % 20);
    size_t sum = 0;
    for (MemoryBlock &b : blocks) {
      b.bytes = rng() % 5000;
      b.first = rng() % 12;
      b.last = b.first + rng() % 5;
      sum += align(b.bytes);
    }
    ASSERT_TRUE(checkMemoryBlocks(blocks).ok());
    ArenaPlan a = planArena(blocks);
    Status v = verifyArenaPlan(blocks, a);
    EXPECT_TRUE(v.ok()) << v.message();
    EXPECT_GE(a.arenaBytes, maxLiveBytes(blocks));
    EXPECT_LE(a.arenaBytes, sum);
    EXPECT_EQ(planArena(blocks).offsets, a.offsets);
  }
}

} // namespace
