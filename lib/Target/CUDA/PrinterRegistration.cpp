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
      [](ModuleOp module, llvm::raw_ostream &os) {
        return printKernelsAsCUDA(module, os, indexBits);
      },
      [](DialectRegistry &registry) {
        // The kernels' dialects, and those of host functions beside them.
        registry.insert<gnnk::GNNKDialect, GNNDialect, arith::ArithDialect,
                        func::FuncDialect, math::MathDialect,
                        memref::MemRefDialect, scf::SCFDialect>();
      });
}
