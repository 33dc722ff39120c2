//===- PrinterRegistration.cpp - the gnnk-to-cuda translation -------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Target/CUDA/CUDAPrinter.h"

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

void mlir::gnn::registerGNNKToCUDATranslation() {
  static llvm::cl::opt<int> indexBits(
      "gnnk-index-bits", llvm::cl::init(32),
      llvm::cl::desc("graph index width of --gnnk-to-cuda (32 or 64)"));
  TranslateFromMLIRRegistration registration(
      "gnnk-to-cuda", "the CUDA C++ of a module of gnnk kernels",
      [](ModuleOp module, llvm::raw_ostream &os) -> LogicalResult {
        // The options of --gnn-to-cuda / --gnn-to-program, which compile
        // a gnn module; gnnk kernels are compiled already: they did
        // nothing here.
        auto &registered = llvm::cl::getRegisteredOptions();
        for (llvm::StringRef name :
             {"gnn-index-bits", "gnn-stats", "gnn-max-chunks"}) {
          auto it = registered.find(name);
          if (it != registered.end() && it->second->getNumOccurrences())
            return module->emitError()
                   << "--" << name << " is an option of --gnn-to-cuda and "
                   << "--gnn-to-program"
                   << (name == "gnn-index-bits"
                           ? "; --gnnk-to-cuda takes --gnnk-index-bits"
                           : " (kernels given as gnnk are scheduled already)");
        }
        return printKernelsAsCUDA(module, os, indexBits);
      },
      [](DialectRegistry &registry) {
        // The kernels' dialects, and those of host functions beside them.
        registry.insert<gnnk::GNNKDialect, GNNDialect, arith::ArithDialect,
                        func::FuncDialect, math::MathDialect,
                        memref::MemRefDialect, scf::SCFDialect>();
      });
}
