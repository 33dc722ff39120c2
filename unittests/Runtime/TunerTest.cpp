//===- TunerTest.cpp - the autotuner ---------------------------------------===//
//
// Part of gnnc. The options without a GPU; on a GPU, a tuning run and its
// cache record.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Tuner.h"
#include "gnn/Graph/HostGraph.h"
#include "gnn/InitGNN.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Environment.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

using namespace mlir;
using namespace mlir::gnn;
namespace rt = ::gnn::runtime;

namespace {

/// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char *n, const char *v) : name(n) { setenv(n, v, 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

TEST(Tuner, OptionsFromTheEnvironment) {
  {
    rt::StatusOr<TuneOptions> o = tuneOptionsFromEnvironment();
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->mode, AutotuneMode::Off) << "off by default";
    EXPECT_EQ(o->budgetSeconds, 2.0);
  }
  {
    ScopedEnv mode("GNNC_AUTOTUNE", "exhaustive");
    ScopedEnv budget("GNNC_AUTOTUNE_BUDGET_S", "0.5");
    rt::StatusOr<TuneOptions> o = tuneOptionsFromEnvironment();
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->mode, AutotuneMode::Exhaustive);
    EXPECT_EQ(o->budgetSeconds, 0.5);
  }
  {
    ScopedEnv mode("GNNC_AUTOTUNE", "yes");
    rt::StatusOr<TuneOptions> o = tuneOptionsFromEnvironment();
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.message(), "GNNC_AUTOTUNE='yes': expected off, on or exhaustive");
  }
  {
    ScopedEnv budget("GNNC_AUTOTUNE_BUDGET_S", "-1");
    EXPECT_FALSE(tuneOptionsFromEnvironment().ok());
  }
}

TEST(Tuner, CandidatesStartWithTheModel) {
  EXPECT_EQ(splitCandidates(AutotuneMode::Off), std::vector<int64_t>{-1});
  std::vector<int64_t> on = splitCandidates(AutotuneMode::On);
  std::vector<int64_t> all = splitCandidates(AutotuneMode::Exhaustive);
  EXPECT_EQ(on.front(), -1);
  EXPECT_EQ(all.front(), -1);
  EXPECT_GT(all.size(), on.size());
  for (int64_t s : all)
    EXPECT_TRUE(s == -1 || s == 0 || s >= 32) << s;
}

/// A weighted sum on a power-law graph, tuned, then read back from the
/// cache.
TEST(Tuner, TunesOnceThenReadsTheCache) {
  if (!rt::CudaDriver::get().ok())
    GTEST_SKIP() << "no CUDA device: " << rt::CudaDriver::get().message();
  namespace fs = std::filesystem;
  // ctest gives this binary a cache of its own (unittests/CMakeLists.txt);
  // earlier runs' records are removed so that the first call tunes.
  std::string dir = rt::environment().cacheDir;
  if (dir.empty())
    GTEST_SKIP() << "no disk cache (GNNC_CACHE_DIR=off)";
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".tune")
        fs::remove(e.path(), ec);
  MLIRContext context;
  DialectRegistry registry;
  ::gnn::registerGNNDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func @f(%g: !gnn.graph, %x: tensor<?x64xf32>) -> "
      "tensor<?x64xf32> {\n"
      "  %o = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>\n"
      "  return %o : tensor<?x64xf32>\n}\n",
      &context);
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  ::gnn::HostGraph host = ::gnn::generatePowerLaw(20000, 400000, 3);
  rt::StatusOr<std::unique_ptr<rt::Graph>> g = rt::Graph::fromHost(host);
  ASSERT_TRUE(g.ok()) << g.message();
  CompileOptions options;
  options.stats = (*g)->statistics();
  size_t bytes = 20000 * 64 * 4;
  rt::StatusOr<rt::DeviceBuffer> x = rt::DeviceBuffer::allocate(bytes);
  rt::StatusOr<rt::DeviceBuffer> y = rt::DeviceBuffer::allocate(bytes);
  ASSERT_TRUE(x.ok() && y.ok());
  std::map<std::string, void *> bindings{{"arg1", x->data()},
                                         {"result0", y->data()}};
  TuneOptions tune;
  tune.mode = AutotuneMode::On;
  tune.budgetSeconds = 60;
  rt::StatusOr<TuneResult> first =
      tuneSplit(*module, f, options, **g, bindings, nullptr, tune);
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_EQ(first->source, "tuner");
  EXPECT_EQ(first->timings.size(), splitCandidates(AutotuneMode::On).size());
  rt::StatusOr<TuneResult> second =
      tuneSplit(*module, f, options, **g, bindings, nullptr, tune);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(second->source, "cache");
  EXPECT_EQ(second->split, first->split);
  EXPECT_EQ(second->timings.size(), first->timings.size());
  // Off: the model, untimed.
  tune.mode = AutotuneMode::Off;
  rt::StatusOr<TuneResult> off =
      tuneSplit(*module, f, options, **g, bindings, nullptr, tune);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->source, "model");
  EXPECT_EQ(off->split, -1);
}

} // namespace
