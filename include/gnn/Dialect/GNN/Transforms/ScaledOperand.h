//===- ScaledOperand.h - elementwise ops linear in one operand ---*- C++
//-*-===//
//
// Part of gnnc. Shared by gnn-form-kernel-groups (which fuses such ops
// between an edge_softmax and the spmm it weights) and the attention
// lowering (which relies on it).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_SCALEDOPERAND_H
#define GNN_DIALECT_GNN_TRANSFORMS_SCALEDOPERAND_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
namespace gnn {

/// Whether `generic` yields its `operand` times a factor that does not
/// depend on it: `f(c x) = c f(x)` for every `c`, as attention dropout's
/// `alpha * mask`. The body's yielded value must be built from the operand's
/// block argument by `arith.mulf` with a factor independent of it (either
/// side), `arith.divf` by such a factor and `arith.negf`. A fused attention
/// kernel then evaluates the op with the operand 1 to get the factor.
inline bool isScaledOperand(linalg::GenericOp generic, OpOperand &operand) {
  if (!generic.isDpsInput(&operand) || generic->getNumResults() != 1)
    return false;
  Block &body = generic.getRegion().front();
  BlockArgument x = generic.getMatchingBlockArgument(&operand);
  // The operand must be read once (`alpha * alpha` is not linear); an init
  // may be the same tensor when its value is not read.
  for (OpOperand &other : generic->getOpOperands())
    if (&other != &operand && other.get() == operand.get() &&
        generic.payloadUsesValueFromOperand(&other))
      return false;
  // Whether `v` is computed without `x`.
  auto independent = [&](Value v) {
    SmallVector<Value> work = {v};
    while (!work.empty()) {
      Value w = work.pop_back_val();
      if (w == x)
        return false;
      if (Operation *def = w.getDefiningOp())
        if (def->getBlock() == &body) {
          if (def->getNumRegions())
            return false;
          llvm::append_range(work, def->getOperands());
        }
    }
    return true;
  };
  Value v = cast<linalg::YieldOp>(body.getTerminator()).getValues()[0];
  while (v != x) {
    Operation *def = v.getDefiningOp();
    if (auto mul = dyn_cast_or_null<arith::MulFOp>(def)) {
      if (independent(mul.getRhs()))
        v = mul.getLhs();
      else if (independent(mul.getLhs()))
        v = mul.getRhs();
      else
        return false;
    } else if (auto div = dyn_cast_or_null<arith::DivFOp>(def)) {
      if (!independent(div.getRhs()))
        return false;
      v = div.getLhs();
    } else if (auto neg = dyn_cast_or_null<arith::NegFOp>(def)) {
      v = neg.getOperand();
    } else {
      return false;
    }
  }
  return true;
}

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_SCALEDOPERAND_H
