//===- TranslateToCUDA.h - gnn functions to CUDA and Programs -----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The public entry points of the CUDA target: the CUDA source of a function's
/// kernel groups, and the runtime Program that runs the whole function
/// (kernel launches, cuBLAS GEMMs for linalg.matmul, fills, copies, the
/// conversion of edge tensors at the boundary). Functions that still hold
/// graph ops outside kernel groups go through gnn-codegen-pipeline first.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TARGET_CUDA_TRANSLATETOCUDA_H
#define GNN_TARGET_CUDA_TRANSLATETOCUDA_H

#include "gnn/Dialect/GNN/Transforms/Pipelines.h"
#include "gnn/Runtime/Program.h"
#include "gnn/Target/CUDA/CUDAEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace gnn {

/// Everything that decides the generated code.
struct CodegenOptions {
  EmitOptions emit;
  /// Graph statistics for gnn-select-schedules.
  double meanDegree = 16.0;
  int64_t maxDegree = 0;
};

/// Runs gnn-codegen-pipeline on `module` unless its graph ops are already in
/// kernel groups.
LogicalResult prepareForCodegen(ModuleOp module, const CodegenOptions &options);

/// The CUDA source of `func` (which prepareForCodegen has run on).
LogicalResult translateToCUDA(func::FuncOp func, llvm::raw_ostream &os,
                              const EmitOptions &options);

/// The runtime Program of `func` (which prepareForCodegen has run on). Inputs
/// are named `arg<K>` after the function's argument numbers, outputs
/// `result<K>`.
FailureOr<::gnn::runtime::Program> lowerToProgram(func::FuncOp func,
                                                  const EmitOptions &options);

/// Registers `--gnn-to-cuda` and `--gnn-to-program` with mlir-translate.
void registerGNNTranslations();

} // namespace gnn
} // namespace mlir

#endif // GNN_TARGET_CUDA_TRANSLATETOCUDA_H
