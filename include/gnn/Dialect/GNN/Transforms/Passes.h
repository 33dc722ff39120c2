//===- Passes.h - gnn dialect passes ------------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_PASSES_H
#define GNN_DIALECT_GNN_TRANSFORMS_PASSES_H

#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/MaxChunks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gnn {

#define GEN_PASS_DECL
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"

/// Adds the pattern of gnn-edge-sums-to-node-sums: a sum over all edges
/// becomes a per-destination gnn.reduce sum and a sum over the nodes.
void populateEdgeSumsToNodeSumsPatterns(RewritePatternSet &patterns);

/// Whether gnn-pull-extremum-grads pulls the gradient of an unweighted
/// max/min over rows of element type `type` along the edges (bf16 and f16,
/// whose rows tie often) instead of routing it by winner ids. Such a
/// gradient needs only the number of edges attaining each extremum, so
/// gnn-autodiff gives the forward's spmm `counted` codes for it.
bool pullsExtremumGrads(Type type);

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_PASSES_H
