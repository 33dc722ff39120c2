//===- Driver.cpp - gnn IR + graph statistics -> Program ------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"

#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/Pipelines.h"
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h"
#include "gnn/Target/CUDA/TranslateToCUDA.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::gnn;

void mlir::gnn::buildCUDAPipeline(OpPassManager &pm,
                                  const CUDAPipelineOptions &options) {
  // Kernel groups (with fusion) and their schedules from the statistics.
  CodegenPipelineOptions codegen;
  codegen.stats = options.stats;
  codegen.maxChunks = options.maxChunks;
  codegen.split = options.split;
  codegen.fuse = ArrayRef<std::string>(options.fuse);
  buildCodegenPipeline(pm, codegen);
  // One gnnk kernel per group, launched in its place.
  gnnk::GNNLowerToKernelsOptions lower;
  lower.indexBits = options.indexBits;
  pm.addPass(gnnk::createGNNLowerToKernels(lower));
  // Rows above the schedule's threshold spread over the GPU.
  gnnk::GNNSplitHeavyRowsOptions split;
  split.maxChunks = options.maxChunks;
  pm.addPass(gnnk::createGNNSplitHeavyRows(split));
}

LogicalResult mlir::gnn::lowerForCUDA(ModuleOp module,
                                      const CompileOptions &options) {
  bool lowered = true;
  module.walk([&](Operation *op) {
    if (isa<GNNDialect>(op->getDialect()))
      lowered = false;
  });
  if (lowered)
    return success();
  PassManager pm(module.getContext());
  CUDAPipelineOptions pipeline;
  pipeline.stats = options.stats.toOption();
  pipeline.indexBits = options.indexBits;
  pipeline.maxChunks = options.maxChunks;
  pipeline.split = options.split;
  buildCUDAPipeline(pm, pipeline);
  return pm.run(module);
}

FailureOr<::gnn::runtime::Program>
mlir::gnn::compileToProgram(ModuleOp module, func::FuncOp func,
                            const CompileOptions &options) {
  if (failed(lowerForCUDA(module, options)))
    return failure();
  return buildProgram(func, options.indexBits, options.stats.csrOrder);
}

void mlir::gnn::registerCompilerPipelines() {
  registerGNNPassesAndPipelines();
  gnnk::registerGNNKernelPasses();
  PassPipelineRegistration<CUDAPipelineOptions>(
      "gnn-cuda-pipeline",
      "graph-level IR to gnnk kernels and launches, ready for the CUDA "
      "printer and the Program",
      buildCUDAPipeline);
}
