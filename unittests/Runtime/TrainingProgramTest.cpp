//===- TrainingProgramTest.cpp - a training step's Programs ---------------===//
//
// Part of gnnc. CPU only: examples differentiated (differentiateForTraining)
// and compiled (compileTrainingProgram); how the backward's buffers bind to
// the step's, the step's buffers, its device memory, and the errors of
// TrainingProgram::verify.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"
#include "gnn/InitGNN.h"
#include "gnn/Runtime/DeviceBytes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

using namespace mlir;
namespace rt = ::gnn::runtime;

namespace {

class TrainingPrograms : public ::testing::Test {
protected:
  TrainingPrograms() {
    DialectRegistry registry;
    ::gnn::registerGNNDialects(registry);
    mlir::gnn::registerVJPModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The training step of examples/NAME.mlir's function.
  rt::TrainingProgram compile(const std::string &name) {
    std::string path =
        std::string(GNNC_SOURCE_DIR) + "/examples/" + name + ".mlir";
    module = parseSourceFile<ModuleOp>(path, &context);
    EXPECT_TRUE(module) << path;
    return compileModule({});
  }

  /// The training step of the first function of `text`, for graphs of
  /// `stats` (the default: 1000 nodes of in-degree 16).
  rt::TrainingProgram compileText(const std::string &text,
                                  const std::string &stats = "") {
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    mlir::gnn::CompileOptions options;
    if (!stats.empty())
      EXPECT_EQ(::gnn::GraphStats::parseOption(stats, options.stats), "");
    return compileModule(options);
  }

  rt::TrainingProgram compileModule(const mlir::gnn::CompileOptions &options) {
    if (!module)
      return {};
    auto f = *module->getOps<func::FuncOp>().begin();
    FailureOr<mlir::gnn::TrainingFunctions> t =
        mlir::gnn::differentiateForTraining(f);
    EXPECT_TRUE(succeeded(t));
    if (failed(t))
      return {};
    functions = *t;
    FailureOr<rt::TrainingProgram> p = mlir::gnn::compileTrainingProgram(
        *module, *t, options, options);
    EXPECT_TRUE(succeeded(p));
    return succeeded(p) ? *p : rt::TrainingProgram();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  mlir::gnn::TrainingFunctions functions;
};

const rt::BufferDecl *find(const std::vector<rt::BufferDecl> &buffers,
                           const std::string &name) {
  for (const rt::BufferDecl &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

TEST_F(TrainingPrograms, GcnBindsResidualsWhereTheForwardLeftThem) {
  rt::TrainingProgram t = compile("gcn");
  ASSERT_TRUE(t.verify().ok()) << t.verify().message();
  EXPECT_EQ(t.numResults, 1u);
  // @gcn_bwd(graph, x, w, normalised aggregate, dy) -> (dx, dw, db): two
  // residuals are the arguments, one the forward's second output.
  std::map<std::string, std::string> expected = {
      {"arg1", "arg1"},    {"arg2", "arg2"},    {"arg3", "result1"},
      {"arg4", "dresult0"}, {"result0", "grad1"}, {"result1", "grad2"},
      {"result2", "grad3"}};
  EXPECT_EQ(t.backwardBindings, expected);
  ASSERT_EQ(functions.residuals.size(), 3u);
  EXPECT_EQ(functions.gradients, (SmallVector<unsigned>{1, 2, 3}));
}

TEST_F(TrainingPrograms, StepBuffersOfEveryExample) {
  for (const char *name : {"gcn", "sage_mean", "sage_max", "gin", "gat",
                           "gatv2", "transformer", "agnn"}) {
    SCOPED_TRACE(name);
    rt::TrainingProgram t = compile(name);
    ASSERT_TRUE(t.verify().ok()) << t.verify().message();
    std::vector<rt::BufferDecl> step = t.stepBuffers();
    // Every backward buffer binds to a buffer of the step, of its type.
    for (const auto &[bwd, name] : t.backwardBindings) {
      const rt::BufferDecl *b = find(step, name);
      ASSERT_TRUE(b) << bwd << " -> " << name;
      EXPECT_EQ(b->dtype, find(t.backward.buffers, bwd)->dtype);
    }
    // The output gradient is sized like the result, the gradients like
    // their arguments, one per differentiable argument.
    const rt::BufferDecl *dy = find(step, "dresult0");
    ASSERT_TRUE(dy);
    EXPECT_EQ(dy->role, rt::BufferRole::Input);
    EXPECT_EQ(dy->use, rt::BufferUse::OutputGradient);
    EXPECT_EQ(dy->index, 0);
    // Every buffer of the step says what it holds: f's results, then the
    // residuals the forward leaves for the backward.
    for (const rt::BufferDecl &b : step) {
      EXPECT_NE(b.use, rt::BufferUse::None) << b.name;
      if (b.use == rt::BufferUse::Result || b.use == rt::BufferUse::Residual)
        EXPECT_EQ(b.use == rt::BufferUse::Residual,
                  b.index >= int64_t(t.numResults))
            << b.name;
    }
    EXPECT_EQ(dy->size.text(), find(step, "result0")->size.text());
    for (unsigned i : functions.gradients) {
      const rt::BufferDecl *g = find(step, "grad" + std::to_string(i));
      ASSERT_TRUE(g) << "grad" << i;
      EXPECT_EQ(g->role, rt::BufferRole::Output);
      EXPECT_EQ(g->use, rt::BufferUse::Gradient);
      EXPECT_EQ(g->index, int64_t(i));
      EXPECT_EQ(g->size.text(),
                find(step, "arg" + std::to_string(i))->size.text());
    }
    // The step holds its buffers and the larger workspace of the two.
    rt::FormulaScope scope{100000, 1600000, 1, 900, 700, 100000};
    rt::StatusOr<rt::DeviceMemoryNeed> need =
        rt::trainingMemoryNeed(t, scope);
    rt::StatusOr<rt::ProgramDeviceBytes> fwd =
        rt::programDeviceBytes(t.forward, scope);
    rt::StatusOr<rt::ProgramDeviceBytes> bwd =
        rt::programDeviceBytes(t.backward, scope);
    ASSERT_TRUE(need.ok() && fwd.ok() && bwd.ok()) << need.message();
    EXPECT_EQ(need->buffers.workspace, std::max(fwd->workspace, bwd->workspace));
    // The step's outputs: the forward's and the gradients (the backward's).
    // Its inputs: the forward's and the output gradients.
    EXPECT_EQ(need->buffers.outputs, fwd->outputs + bwd->outputs);
    EXPECT_GT(need->buffers.inputs, fwd->inputs);
    EXPECT_GE(need->total, need->graph.kept + need->buffers.total());
  }
}

TEST_F(TrainingPrograms, VerifyNamesWhatIsWrong) {
  rt::TrainingProgram good = compile("gcn");
  ASSERT_TRUE(good.verify().ok());
  auto error = [&](auto change) {
    rt::TrainingProgram t = good;
    change(t);
    rt::Status s = t.verify();
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings.erase("arg3");
            }),
            "the backward's input 'arg3' is not bound");
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings["arg4"] = "dresult1";
            }),
            "the backward's buffer 'arg4' bound to 'dresult1': the step has "
            "no buffer of that name (arg<i> and grad<i> for the forward's "
            "inputs, result<k> for its outputs, dresult<k> for the "
            "function's 1 results)");
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings["arg3"] = "result7";
            }),
            "the backward's buffer 'arg3' bound to 'result7': the step has "
            "no buffer of that name (arg<i> and grad<i> for the forward's "
            "inputs, result<k> for its outputs, dresult<k> for the "
            "function's 1 results)");
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings["result1"] = "grad1";
            }),
            "the backward's buffer 'result1' bound to 'grad1': another output "
            "writes it too");
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings["result0"] = "arg1";
            }),
            "the backward's buffer 'result0' bound to 'arg1': a backward "
            "output must write a gradient 'grad<i>'");
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings["arg1"] = "grad1";
            }),
            "the backward's buffer 'arg1' bound to 'grad1': a gradient is "
            "written, not read");
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings["result0"] = "grad9";
            }),
            "the backward's buffer 'result0' bound to 'grad9': the step has "
            "no buffer of that name (arg<i> and grad<i> for the forward's "
            "inputs, result<k> for its outputs, dresult<k> for the "
            "function's 1 results)");
  // The step binds the forward's buffers by the names their uses give.
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              for (rt::BufferDecl &b : t.forward.buffers)
                if (b.name == "arg1")
                  b.index = 5;
            }),
            "the forward's input 'arg1' is not argument <i> named arg<i>");
  EXPECT_EQ(error([](rt::TrainingProgram &t) {
              t.backwardBindings["tmp"] = "arg1";
            }),
            "the backward's buffer 'tmp' bound to 'arg1': the backward has no "
            "such input or output");
  EXPECT_EQ(error([](rt::TrainingProgram &t) { t.numResults = 5; }),
            "the forward has 2 outputs, fewer than the function's 5 results");
  // AGNN's backward reads x in kernels only (in GCN's it is a GEMM operand,
  // whose type the Program's own verifier checks first).
  rt::TrainingProgram agnn = compile("agnn");
  ASSERT_TRUE(agnn.verify().ok());
  for (rt::BufferDecl &b : agnn.backward.buffers)
    if (b.name == "arg1")
      b.dtype = rt::DType::F64;
  EXPECT_EQ(agnn.verify().message(),
            "the backward's buffer 'arg1' bound to 'arg1': element types "
            "differ");
}

TEST_F(TrainingPrograms, AFunctionDifferentiatedTwiceIsADiagnostic) {
  std::string path = std::string(GNNC_SOURCE_DIR) + "/examples/gcn.mlir";
  module = parseSourceFile<ModuleOp>(path, &context);
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  ASSERT_TRUE(succeeded(mlir::gnn::differentiateForTraining(f)));
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(mlir::gnn::differentiateForTraining(f)));
  EXPECT_EQ(message, "'func.func' op cannot be differentiated: @gcn_fwd "
                     "exists already");
}

/// bf16 rows scaled by an f32 parameter through explicit casts, then
/// attention: the training step compiles for small and large graphs (the
/// parameter's gradient sums bf16 terms into an f32 accumulator, which the
/// derivative rules must convert).
TEST_F(TrainingPrograms, MixedHalfAndF32Compile) {
  std::string path = std::string(GNNC_SOURCE_DIR) +
                     "/test/Integration/Inputs/mixed_bf16_f32.mlir";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  for (const char *stats : {"", "nodes:6,edges:7,max-in:3"}) {
    SCOPED_TRACE(stats);
    rt::TrainingProgram t = compileText(text, stats);
    EXPECT_TRUE(t.verify().ok()) << t.verify().message();
  }
}

} // namespace
