//===- Pipelines.h - named gnnc pipelines -------------------------*- C++ -*-===//
//
// Part of gnnc. Defined once, used by gnn-opt, gnn-run, gnn-translate and
// tests alike.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_PIPELINES_H
#define GNN_DIALECT_GNN_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace gnn {

/// Options of the code generation pipeline: the graph statistics schedules
/// depend on.
struct CodegenPipelineOptions
    : public PassPipelineOptions<CodegenPipelineOptions> {
  Option<std::string> stats{
      *this, "stats",
      llvm::cl::desc("graph statistics (gnn-select-schedules' `stats`)"),
      llvm::cl::init("")};
  Option<int64_t> maxChunks{
      *this, "max-chunks",
      llvm::cl::desc("the most chunks of a split heavy-row kernel"),
      llvm::cl::init(8192)};
  Option<int64_t> split{
      *this, "split",
      llvm::cl::desc("heavy-row threshold of every row group "
                     "(gnn-select-schedules' `split`; -1: from the statistics)"),
      llvm::cl::init(-1)};
  ListOption<std::string> fuse{
      *this, "fuse",
      llvm::cl::desc("fusion rules (gnn-form-kernel-groups' `fuse`; empty: "
                     "its default)")};
};

/// `gnn-codegen-pipeline`: graph-level IR to kernel groups with schedules,
/// ready for the CUDA emitter and the Program lowering.
void buildCodegenPipeline(OpPassManager &pm,
                          const CodegenPipelineOptions &options);

/// Registers the passes and the named pipelines with the global registry.
void registerGNNPassesAndPipelines();

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_PIPELINES_H
