//===- TranslateRegistration.cpp - gnn-translate entry points -------------===//
//
// Part of gnnc. `--gnn-to-cuda` and `--gnn-to-program` compile a module
// through the driver (which lowers it when needed) and print the CUDA source
// or the Program of each function.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"
#include "gnn/InitGNN.h"
#include "gnn/Target/CUDA/CUDAPrinter.h"
#include "gnn/Target/CUDA/TranslateToCUDA.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::gnn;

static llvm::cl::opt<int> indexBits("gnn-index-bits", llvm::cl::init(32),
                                    llvm::cl::desc("graph index width (32 or 64)"));
static llvm::cl::opt<std::string> stats(
    "gnn-stats", llvm::cl::init(""),
    llvm::cl::desc("graph statistics schedules are picked from "
                   "(gnn::GraphStats::toOption's form, e.g. "
                   "nodes:1000,edges:13000,max-in:5000)"));

static llvm::cl::opt<int64_t> maxChunks(
    "gnn-max-chunks", llvm::cl::init(::mlir::gnn::kDefaultMaxChunks),
    llvm::cl::desc("the most chunks of a split heavy-row kernel"));

/// The options from the command line (`--gnn-stats` checked by lowered()).
static CompileOptions options() {
  CompileOptions o;
  o.maxChunks = maxChunks;
  o.indexBits = indexBits;
  if (!stats.empty())
    (void)::gnn::GraphStats::parseOption(stats, o.stats);
  return o;
}

/// The first of `names` (options of another translation) given on the
/// command line, or "".
static std::string givenOption(std::initializer_list<llvm::StringRef> names) {
  auto &registered = llvm::cl::getRegisteredOptions();
  for (llvm::StringRef name : names) {
    auto it = registered.find(name);
    if (it != registered.end() && it->second->getNumOccurrences())
      return name.str();
  }
  return "";
}

static ModuleOp lowered(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module) {
    op->emitError("expects a module");
    return nullptr;
  }
  // --gnnk-to-cuda's index width was ignored here, silently.
  if (std::string other = givenOption({"gnnk-index-bits"}); !other.empty()) {
    op->emitError() << "--" << other << " is an option of --gnnk-to-cuda; "
                    << "--gnn-to-cuda and --gnn-to-program take "
                    << "--gnn-index-bits";
    return nullptr;
  }
  ::gnn::GraphStats parsed;
  if (std::string bad = ::gnn::GraphStats::parseOption(stats, parsed);
      !stats.empty() && !bad.empty()) {
    op->emitError() << "--gnn-stats '" << stats << "': " << bad;
    return nullptr;
  }
  if (failed(lowerForCUDA(module, options())))
    return nullptr;
  return module;
}

void mlir::gnn::registerGNNTranslations() {
  auto dialects = [](DialectRegistry &registry) {
    ::gnn::registerGNNDialects(registry);
  };
  TranslateFromMLIRRegistration toCuda(
      "gnn-to-cuda", "the CUDA C++ kernels of the module",
      [](Operation *op, llvm::raw_ostream &os) {
        ModuleOp module = lowered(op);
        if (!module)
          return failure();
        return printKernelsAsCUDA(module, os, options().indexBits);
      },
      dialects);
  TranslateFromMLIRRegistration toProgram(
      "gnn-to-program", "the runtime Program (JSON) of each function",
      [](Operation *op, llvm::raw_ostream &os) {
        ModuleOp module = lowered(op);
        if (!module)
          return failure();
        for (auto f : module.getOps<func::FuncOp>()) {
          if (f.isExternal())
            continue;
          FailureOr<::gnn::runtime::Program> p =
              buildProgram(f, options().indexBits);
          if (failed(p))
            return failure();
          os << p->toJson();
        }
        return success();
      },
      dialects);
}
