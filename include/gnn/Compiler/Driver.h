//===- Driver.h - gnn IR + graph statistics -> Program ------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The compile driver: the one entry point that turns a module of `gnn`
/// functions and the statistics of the graph they will run on into runtime
/// Programs. `gnn-run`, `gnn-translate`, the Python package and the
/// autotuner call it; it owns the pass pipeline so that the CUDA target is a
/// pure function of the lowered IR.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_COMPILER_DRIVER_H
#define GNN_COMPILER_DRIVER_H

#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/Transforms/Autodiff.h"
#include "gnn/Dialect/GNN/Transforms/MaxChunks.h"
#include "gnn/Dialect/GNN/Transforms/Pipelines.h"
#include "gnn/Runtime/Program.h"
#include "gnn/Runtime/TrainingProgram.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace gnn {

/// What decides the generated code: graph statistics and the index width.
struct CompileOptions {
  /// The statistics of the graph the code will run on (the runtime Graph's
  /// or the host graph's); the default: 1000 nodes of in-degree 16.
  ::gnn::GraphStats stats = ::gnn::ScheduleProblem::defaultStats();
  /// Width of the graph's index arrays (32 or 64).
  int indexBits = 32;
  /// The most chunks a split heavy-row kernel uses (gnn-split-heavy-rows'
  /// `max-chunks`): bounds its partial-result buffer.
  int64_t maxChunks = ::mlir::gnn::kDefaultMaxChunks;
  /// The heavy-row threshold of every row group instead of the one chosen
  /// from the statistics (gnn-select-schedules' `split`); -1: chosen.
  int64_t split = -1;
};

/// Options of `gnn-cuda-pipeline`: those of gnn-codegen-pipeline and the
/// index width.
struct CUDAPipelineOptions
    : public SchedulePipelineOptions<CUDAPipelineOptions> {
  Option<int> indexBits{*this, "index-bits",
                        llvm::cl::desc("graph index width (32 or 64)"),
                        llvm::cl::init(32)};
};

/// `gnn-cuda-pipeline`: graph-level IR to gnnk kernels and launches (kernel
/// groups with fusion, schedules, lowering, heavy-row splitting).
void buildCUDAPipeline(OpPassManager &pm, const CUDAPipelineOptions &options);

/// Runs gnn-cuda-pipeline on `module` unless it is already lowered (holds
/// no graph op and no kernel group outside kernels).
LogicalResult lowerForCUDA(ModuleOp module, const CompileOptions &options);

/// Lowers `module` (when needed) and returns the Program of `func`.
FailureOr<::gnn::runtime::Program>
compileToProgram(ModuleOp module, func::FuncOp func,
                 const CompileOptions &options);

/// The Program of `func`, lowered in a copy of `module` that holds only
/// `func` and the functions it refers to (no other function's kernels are
/// generated or compiled). `module` is not modified.
FailureOr<::gnn::runtime::Program>
compileFunction(ModuleOp module, func::FuncOp func,
                const CompileOptions &options);

/// The Programs of a training step of `training` (differentiateForTraining,
/// in `module`) and how the backward's buffers bind to the step's
/// (TrainingProgram.h): the forward compiled with `forward`'s options, the
/// backward with `backward`'s. `module` is not modified (each is lowered in
/// a copy).
FailureOr<::gnn::runtime::TrainingProgram>
compileTrainingProgram(ModuleOp module, const TrainingFunctions &training,
                       const CompileOptions &forward,
                       const CompileOptions &backward);

/// Registers `gnn-cuda-pipeline` (and the gnn and gnnk passes) for gnn-opt.
void registerCompilerPipelines();

/// Registers `--gnn-to-cuda` and `--gnn-to-program` with mlir-translate.
void registerGNNTranslations();

} // namespace gnn
} // namespace mlir

#endif // GNN_COMPILER_DRIVER_H
