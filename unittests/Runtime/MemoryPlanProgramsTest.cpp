//===- MemoryPlanProgramsTest.cpp - plans of compiled multi-layer models --===//
//
// Part of gnnc. CPU only: test/Runtime/Inputs/gcn3.mlir and gat2.mlir go
// through the compile driver; the plan of each Program must hold no more
// than its largest live set, about one layer's temporaries.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"
#include "gnn/InitGNN.h"
#include "gnn/Runtime/MemoryPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <iostream>
#include <set>

using namespace mlir;
namespace rt = ::gnn::runtime;

namespace {

/// arxiv-like sizes.
constexpr int64_t kNodes = 169343, kEdges = 1166243;

size_t align(size_t n) {
  return (n + rt::kArenaAlignment - 1) / rt::kArenaAlignment *
         rt::kArenaAlignment;
}

class MemoryPlanPrograms : public ::testing::Test {
protected:
  MemoryPlanPrograms() {
    DialectRegistry registry;
    ::gnn::registerGNNDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The Program of the first function of test/Runtime/Inputs/NAME.mlir.
  rt::Program compile(const std::string &name, int64_t maxDegree = 0) {
    std::string path =
        std::string(GNNC_SOURCE_DIR) + "/test/Runtime/Inputs/" + name + ".mlir";
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &context);
    EXPECT_TRUE(module) << path;
    if (!module)
      return {};
    auto f = *module->getOps<func::FuncOp>().begin();
    mlir::gnn::CompileOptions options;
    options.stats.nodes = options.stats.largestGraph =
        options.stats.smallestGraph = kNodes;
    options.stats.edges = kEdges;
    options.stats.maxInDegree = maxDegree;
    FailureOr<rt::Program> p = mlir::gnn::compileToProgram(*module, f, options);
    EXPECT_TRUE(succeeded(p));
    return succeeded(p) ? *p : rt::Program();
  }

  rt::MemoryPlan plan(const rt::Program &p) {
    rt::FormulaScope scope;
    scope.nodes = kNodes;
    scope.edges = kEdges;
    scope.maxInDegree = scope.maxOutDegree = 5000;
    scope.largestGraph = kNodes;
    rt::StatusOr<rt::MemoryPlan> m = rt::planMemory(p, scope);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.message());
    return m.ok() ? *m : rt::MemoryPlan();
  }

  MLIRContext context;
};

// A function of elementwise work only (no graph op) still gets its kernel:
// lowerForCUDA once skipped every module without a graph op as lowered.
TEST_F(MemoryPlanPrograms, ElementwiseOnlyFunctionIsLowered) {
  const char *source = R"mlir(
    func.func @f(%g: !gnn.graph, %x: tensor<?xf32>) -> tensor<?xf32> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?xf32>
      %e = tensor.empty(%n) : tensor<?xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                            affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
          ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
      ^bb0(%v: f32, %o: f32):
        %t = math.tanh %v : f32
        linalg.yield %t : f32
      } -> tensor<?xf32>
      return %y : tensor<?xf32>
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  mlir::gnn::CompileOptions options;
  options.stats.nodes = options.stats.largestGraph =
      options.stats.smallestGraph = 6;
  options.stats.edges = 7;
  FailureOr<rt::Program> p = mlir::gnn::compileToProgram(*module, f, options);
  ASSERT_TRUE(succeeded(p));
  size_t launches = 0;
  for (const rt::Step &step : p->steps)
    launches += std::holds_alternative<rt::LaunchStep>(step);
  EXPECT_EQ(launches, 1u);
}

TEST_F(MemoryPlanPrograms, ThreeLayerGCNHoldsOneLayer) {
  rt::Program p = compile("gcn3");
  rt::MemoryPlan m = plan(p);
  // One layer: the shared normaliser (nodes floats) and two nodes x 64
  // tensors live at once (x W and its scaled copy, or the scaled copy and
  // the layer's output); the 3 layers declare 6 such tensors and 2 of 16.
  size_t row64 = align(kNodes * 64 * 4), dinv = align(kNodes * 4);
  EXPECT_EQ(m.maxLiveBytes, dinv + 2 * row64);
  EXPECT_EQ(m.arenaBytes, m.maxLiveBytes);
  EXPECT_EQ(m.unplannedBytes, size_t(kNodes) * 4 * (1 + 6 * 64 + 2 * 16));
  EXPECT_GT(m.unplannedBytes, 3 * m.arenaBytes);
  ::testing::Test::RecordProperty("gcn3_arena_bytes",
                                  std::to_string(m.arenaBytes));
  std::cout << "gcn3 at " << kNodes << " nodes: unplanned " << m.unplannedBytes
            << " bytes, arena " << m.arenaBytes << " bytes\n";
}

TEST_F(MemoryPlanPrograms, TwoLayerGATHoldsOneLayer) {
  for (int64_t maxDegree : {0, 5000}) { // without, with split heavy rows
    rt::Program p = compile("gat2", maxDegree);
    rt::MemoryPlan m = plan(p);
    // The output holds the first layer's temps that die before it is
    // written: the arena is under the bound of one holding them all.
    EXPECT_LT(m.arenaBytes, m.maxLiveBytes);
    // Less than the first layer's temps (everything up to the second x W).
    size_t layer = 0;
    std::vector<rt::LiveRange> ranges = rt::bufferLiveRanges(p);
    size_t secondGemm = 0;
    for (size_t s = 0, gemms = 0; s < p.steps.size(); ++s)
      if (std::holds_alternative<rt::GemmStep>(p.steps[s]) && ++gemms == 2)
        secondGemm = s;
    ASSERT_GT(secondGemm, 0u);
    for (const rt::MemoryPlan::Temp &t : m.temps)
      if (t.range.used && t.range.first < secondGemm)
        layer += align(t.bytes);
    EXPECT_LE(m.arenaBytes, layer);
    EXPECT_GT(m.unplannedBytes, 2 * m.arenaBytes);
    std::cout << "gat2 (max degree " << maxDegree << ") at " << kNodes
              << " nodes: " << m.temps.size() << " temps, unplanned "
              << m.unplannedBytes << " bytes, arena " << m.arenaBytes
              << " bytes\n";
  }
}

// A split row kernel's launch overlaps its partial and final kernels (the
// runtime starts it beside them): the two steps right before it, with the
// partial states in a buffer of their own (a temp of the partial kernel read
// by the final one, not by the row kernel).
TEST_F(MemoryPlanPrograms, SplitRowKernelOverlapsItsPartialAndFinal) {
  rt::Program p = compile("gat2", 5000);
  size_t splits = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    auto *l = std::get_if<rt::LaunchStep>(&p.steps[i]);
    if (!l || !l->overlaps)
      continue;
    ++splits;
    ASSERT_EQ(l->overlaps, 2) << l->kernel;
    ASSERT_GE(i, 2u);
    auto *partial = std::get_if<rt::LaunchStep>(&p.steps[i - 2]);
    auto *final = std::get_if<rt::LaunchStep>(&p.steps[i - 1]);
    ASSERT_TRUE(partial && final) << l->kernel;
    EXPECT_EQ(partial->kernel, l->kernel + "_partial");
    EXPECT_EQ(final->kernel, l->kernel + "_final");
    // The states: a buffer the partial and final kernels name and the row
    // kernel does not.
    auto names = [](const rt::LaunchStep &s) {
      std::set<std::string> n;
      for (const rt::KernelArg &a : s.args)
        if (a.kind == rt::KernelArg::Kind::Buffer)
          n.insert(a.name);
      return n;
    };
    std::set<std::string> rows = names(*l), states;
    for (const std::string &n : names(*partial))
      if (names(*final).count(n) && !rows.count(n))
        states.insert(n);
    EXPECT_EQ(states.size(), 1u) << l->kernel;
  }
  // One split per layer.
  EXPECT_EQ(splits, 2u);
  // The row kernel's buffers live over its whole window.
  std::vector<rt::LiveRange> ranges = rt::bufferLiveRanges(p);
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (auto *l = std::get_if<rt::LaunchStep>(&p.steps[i]); l && l->overlaps)
      for (const rt::KernelArg &a : l->args)
        if (a.kind == rt::KernelArg::Kind::Buffer)
          for (size_t b = 0; b < p.buffers.size(); ++b)
            if (p.buffers[b].name == a.name) {
              EXPECT_LE(ranges[b].first, i - 2) << a.name;
              EXPECT_GE(ranges[b].last, i) << a.name;
            }
}

} // namespace
