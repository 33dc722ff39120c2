//===- Relu.h - torch.relu as gnnc writes it --------------------*- C++ -*-===//
//
// Part of gnnc. Shared by the generic's derivative rule (VJPRules.cpp: the
// mask read from the result) and GemmBias.h (a GEMM's ReLU in its
// epilogue).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_RELU_H
#define GNN_DIALECT_GNN_TRANSFORMS_RELU_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace gnn {

/// Whether `g` is torch.relu of its one input as gnnc writes it (gnnc.nn's
/// `_relu`, the tracer's `relu`): `select(x <= 0, 0, x)` (`arith.cmpf ole`
/// against a zero of either sign), every loop parallel, the input and the
/// result of one type through one map. Then `x <= 0` holds exactly where
/// `y <= 0` does (y is 0 there, and x itself, > 0 or NaN, elsewhere). (`x <
/// 0` or `max(x, 0)` would not do: y is 0 where x is 0, on both sides of
/// their masks.)
inline bool isReluOfInput(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || g.getNumReductionLoops() != 0 ||
      !g.hasPureTensorSemantics() ||
      g.getDpsInputs()[0].getType() != g->getResult(0).getType())
    return false;
  auto maps = g.getIndexingMapsArray();
  if (maps[0] != maps[1] || !maps[0].isPermutation())
    return false;
  Block &body = g.getRegion().front();
  BlockArgument x = body.getArgument(0);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto sel = yield.getValues()[0].getDefiningOp<arith::SelectOp>();
  if (!sel || sel.getFalseValue() != x ||
      !matchPattern(sel.getTrueValue(), m_AnyZeroFloat()))
    return false;
  auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OLE ||
      cmp.getLhs() != x || !matchPattern(cmp.getRhs(), m_AnyZeroFloat()))
    return false;
  // Nothing else in the body but constants (its zeros).
  for (Operation &op : body.without_terminator())
    if (&op != sel.getOperation() && &op != cmp.getOperation() &&
        !op.hasTrait<OpTrait::ConstantLike>())
      return false;
  return true;
}

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_RELU_H
