//===- Pipelines.h - named gnnc pipelines -------------------------*- C++ -*-===//
//
// Part of gnnc. Defined once, used by gnn-opt, gnn-run, gnn-translate and
// tests alike.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_PIPELINES_H
#define GNN_DIALECT_GNN_TRANSFORMS_PIPELINES_H

#include "gnn/Dialect/GNN/Transforms/MaxChunks.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace gnn {

/// The options of every pipeline that picks schedules (the graph
/// statistics they depend on, the split and fusion choices), declared once;
/// `Derived` adds its own.
template <typename Derived>
struct SchedulePipelineOptions : public PassPipelineOptions<Derived> {
  ::mlir::detail::PassOptions::Option<std::string> stats{
      *this, "stats",
      llvm::cl::desc("graph statistics (gnn-select-schedules' `stats`, "
                     "gnn::GraphStats::toOption's form)"),
      llvm::cl::init("")};
  ::mlir::detail::PassOptions::Option<int64_t> maxChunks{
      *this, "max-chunks",
      llvm::cl::desc("the most chunks of a split heavy-row kernel "
                     "(gnn-split-heavy-rows' max-chunks)"),
      llvm::cl::init(::mlir::gnn::kDefaultMaxChunks)};
  ::mlir::detail::PassOptions::Option<int64_t> split{
      *this, "split",
      llvm::cl::desc(
          "heavy-row threshold of every row group "
          "(gnn-select-schedules' `split`; -1: from the statistics)"),
      llvm::cl::init(-1)};
  ::mlir::detail::PassOptions::ListOption<std::string> fuse{
      *this, "fuse",
      llvm::cl::desc("fusion rules (gnn-form-kernel-groups' `fuse`; empty: "
                     "its default)")};
};

/// Options of the code generation pipeline.
struct CodegenPipelineOptions
    : public SchedulePipelineOptions<CodegenPipelineOptions> {};

/// `gnn-codegen-pipeline`: graph-level IR to kernel groups with schedules,
/// ready for the CUDA emitter and the Program lowering.
void buildCodegenPipeline(OpPassManager &pm,
                          const CodegenPipelineOptions &options);

/// Registers the passes and the named pipelines with the global registry.
void registerGNNPassesAndPipelines();

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_PIPELINES_H
