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

// The split kernels' heavy-row threshold is a formula of the graph's
// light-row counts that the runtime evaluates: the split where the rows of at
// most `split` edges hold the chunks' states, a doubling of it where only
// larger rows do, the last resort (6 doublings) where none do; the kernels
// of one split get the same formula.
TEST_F(MemoryPlanPrograms, SplitThresholdFollowsTheLightRows) {
  rt::Program p = compile("gat2", 5000);
  std::set<std::string> thresholds;
  for (const rt::Step &step : p.steps)
    if (auto *l = std::get_if<rt::LaunchStep>(&step))
      for (const rt::KernelArg &a : l->args)
        if (a.kind == rt::KernelArg::Kind::I64 &&
            a.integer.text().find("+ (1 - min(1, max(0, max(1, csr_light_") !=
                std::string::npos &&
            a.integer.text().find("max(1, csr_light_") != 0)
          thresholds.insert(a.integer.text());
  // One split per layer; the kernels of a split share the formula (and
  // the two layers' splits, of the same shapes, have the same one).
  ASSERT_EQ(thresholds.size(), 1u);
  for (const std::string &text : thresholds) {
    rt::StatusOr<rt::Formula> f = rt::Formula::parse(text);
    ASSERT_TRUE(f.ok()) << f.message();
    int64_t split = std::stoll(text.substr(0, text.find(' ')));
    int first = 0;
    while ((int64_t(2) << first) <= split)
      ++first;
    rt::FormulaScope scope{kNodes, kEdges, 1, 5000, 5000, kNodes};
    auto threshold = [&](int fromJ) {
      for (int j = 0; j < 64; ++j)
        scope.csrLight[j] = j >= fromJ ? kNodes : 0;
      return *f->evaluate(scope);
    };
    EXPECT_EQ(threshold(0), split) << text;
    EXPECT_EQ(threshold(first + 2), int64_t(1) << (first + 2)) << text;
    EXPECT_EQ(threshold(64), int64_t(1) << (first + 6)) << text;
  }
}

} // namespace
