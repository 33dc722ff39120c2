//===- Autodiff.h - reverse-mode derivatives of gnn functions ------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The derivative rules (VJPOpInterface external models) of the `gnn` ops and
/// of the upstream ops gnn functions use, and the function transformation
/// behind `gnn-autodiff`.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_AUTODIFF_H
#define GNN_DIALECT_GNN_TRANSFORMS_AUTODIFF_H

#include "gnn/Dialect/GNN/IR/GNNInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace gnn {

/// Attaches VJPOpInterface to the gnn ops, linalg.generic, linalg.matmul,
/// linalg.fill, tensor.empty/dim/expand_shape/collapse_shape/cast and
/// arith.constant.
void registerVJPModels(DialectRegistry &registry);

/// Zeros shaped like the tensor `like` (tensor.empty sized by tensor.dim,
/// linalg.fill), as the derivative rules build them.
Value buildZerosLike(OpBuilder &b, Location loc, Value like);

/// `a + c` elementwise (tensors of one shape), as a linalg.generic.
Value buildSum(OpBuilder &b, Location loc, Value a, Value c);

struct AutodiffOptions {
  /// Keep the edge-sized values the backward reads (attention's weights,
  /// scores, edge messages) as residuals instead of recomputing them from
  /// node-sized ones and each softmax's log-sum-exp (for measurement).
  bool storeEdgeValues = false;
};

/// Builds `@<f>_fwd` (f's results, then the residuals the backward reads)
/// and `@<f>_bwd` (f's graphs, the residuals, then one gradient per result
/// -> one gradient per differentiable argument) after `func`, which stays.
LogicalResult differentiate(func::FuncOp func,
                            const AutodiffOptions &options = {});

/// Where one residual argument of `@<f>_bwd` comes from, once the forward
/// keeps only the residuals nobody else holds (trimForwardResiduals): an
/// argument of `@<f>_fwd` or one of its results (f's own results first,
/// then the residuals it still outputs).
struct ResidualSource {
  enum class Kind { Argument, Output };
  Kind kind;
  unsigned index;
};

/// Drops from `@<f>_fwd`'s results (f's `numResults` results, then the
/// residuals) every residual that is one of its arguments, one of f's
/// results or an earlier residual (the same SSA value): the caller holds
/// those tensors already, and a second output would be a copy of them (an
/// attention's output, a max's). Returns the source of each residual in
/// order, to bind `@<f>_bwd`'s residual arguments.
SmallVector<ResidualSource> trimForwardResiduals(func::FuncOp fwd,
                                                 unsigned numResults);

/// A function differentiated for a training step: `@<f>_fwd` trimmed
/// (trimForwardResiduals), `@<f>_bwd`, where each of the backward's
/// residual arguments comes from, and the arguments of f whose gradients
/// the backward returns, in its result order.
struct TrainingFunctions {
  func::FuncOp forward, backward;
  /// f's results (the forward's first results).
  unsigned numResults = 0;
  SmallVector<ResidualSource> residuals;
  SmallVector<unsigned> gradients;
};

/// Differentiates `func` for training (gnn-run --grad, the Python package):
/// with respect to its arguments marked {gnn.differentiable}, or every
/// float tensor argument when none is marked; then trims the forward's
/// residuals. Emits a diagnostic on `func` and fails when it cannot be
/// differentiated or `@<f>_fwd` or `@<f>_bwd` exists already.
FailureOr<TrainingFunctions>
differentiateForTraining(func::FuncOp func, const AutodiffOptions &options = {});

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_AUTODIFF_H
