//===- Pipelines.cpp - named gnnc pipelines -------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/Transforms/Pipelines.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gnn;

void mlir::gnn::buildCodegenPipeline(OpPassManager &pm,
                                     const CodegenPipelineOptions &options) {
  // Edge projections with a short contraction (GINE's lin(edge_attr)) as
  // maps, which the edge passes reading them compute.
  pm.addNestedPass<func::FuncOp>(createGNNExpandNarrowMatmuls());
  // The gradients of bf16/f16 max/min aggregations as aggregations at the
  // edges' other end (their ties are too frequent to route).
  pm.addNestedPass<func::FuncOp>(createGNNPullExtremumGrads());
  // Sums over all edges (parameter gradients) as per-node reduces, so that
  // fusion recomputes their edge values instead of writing them.
  pm.addNestedPass<func::FuncOp>(createGNNEdgeSumsToNodeSums());
  // Merge identical pure ops (repeated tensor.dim, fills) so they are not
  // materialised twice.
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  // An elementwise value read by one elementwise op computed there (GIN's
  // backward `(1 + eps) * dh` in its aggregation's epilogue).
  pm.addNestedPass<func::FuncOp>(createGNNFuseElementwise());
  // Kernel groups: fused pipelines, elementwise consumers absorbed.
  if (options.fuse.empty()) {
    pm.addNestedPass<func::FuncOp>(createGNNFormKernelGroups());
  } else {
    GNNFormKernelGroupsOptions groups;
    groups.fuse.assign(options.fuse.begin(), options.fuse.end());
    pm.addNestedPass<func::FuncOp>(createGNNFormKernelGroups(groups));
  }
  // Thread mapping per group from the graph's statistics and the shapes.
  GNNSelectSchedulesOptions s;
  s.stats = options.stats;
  s.split = options.split;
  pm.addNestedPass<func::FuncOp>(createGNNSelectSchedules(s));
}

void mlir::gnn::registerGNNPassesAndPipelines() {
  registerGNNPasses();
  PassPipelineRegistration<CodegenPipelineOptions>(
      "gnn-codegen-pipeline",
      "graph-level IR to scheduled kernel groups, ready for CUDA emission",
      buildCodegenPipeline);
}
