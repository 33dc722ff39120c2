//===- TranslateRegistration.cpp - gnn-translate entry points -------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/InitGNN.h"
#include "gnn/Target/CUDA/TranslateToCUDA.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::gnn;

static llvm::cl::opt<int> indexBits("gnn-index-bits", llvm::cl::init(32),
                                    llvm::cl::desc("graph index width (32 or 64)"));
static llvm::cl::opt<double> meanDegree(
    "gnn-mean-degree", llvm::cl::init(16.0),
    llvm::cl::desc("mean in-degree used to pick schedules"));

static CodegenOptions options() {
  CodegenOptions o;
  o.emit.indexBits = indexBits;
  o.meanDegree = meanDegree;
  return o;
}

/// Applies `fn` to every function with a body.
template <typename Fn>
static LogicalResult forEachFunction(Operation *op, Fn fn) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expects a module");
  if (failed(prepareForCodegen(module, options())))
    return failure();
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && failed(fn(func)))
      return failure();
  return success();
}

void mlir::gnn::registerGNNTranslations() {
  auto dialects = [](DialectRegistry &registry) {
    ::gnn::registerGNNDialects(registry);
  };
  TranslateFromMLIRRegistration toCuda(
      "gnn-to-cuda", "the CUDA C++ kernels of each function",
      [](Operation *op, llvm::raw_ostream &os) {
        return forEachFunction(op, [&](func::FuncOp f) {
          os << "// function " << f.getSymName() << "\n";
          return translateToCUDA(f, os, options().emit);
        });
      },
      dialects);
  TranslateFromMLIRRegistration toProgram(
      "gnn-to-program", "the runtime Program (JSON) of each function",
      [](Operation *op, llvm::raw_ostream &os) {
        return forEachFunction(op, [&](func::FuncOp f) -> LogicalResult {
          FailureOr<::gnn::runtime::Program> p = lowerToProgram(f, options().emit);
          if (failed(p))
            return failure();
          os << p->toJson();
          return success();
        });
      },
      dialects);
}
