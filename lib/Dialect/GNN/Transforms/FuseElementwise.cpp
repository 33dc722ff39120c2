//===- FuseElementwise.cpp - merge elementwise producers into consumers ---===//
//
// Part of gnnc. `gnn-fuse-elementwise` (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNFUSEELEMENTWISE
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

namespace {

bool allParallel(linalg::GenericOp op) {
  return op.getNumParallelLoops() == op.getNumLoops() &&
         op.hasPureTensorSemantics();
}

/// Whether `v`'s one user, size queries aside, is `user`.
bool onlyUser(Value v, Operation *user) {
  return llvm::all_of(v.getUsers(), [&](Operation *u) {
    return u == user || isa<tensor::DimOp>(u);
  });
}

/// Whether `op` reads a value a graph op wrote (an edge value, or an
/// aggregation's result).
bool readsGraphOp(linalg::GenericOp op) {
  return llvm::any_of(op.getDpsInputs(), [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && isa<GNNDialect>(def->getDialect());
  });
}

/// The input of `consumer` that a mergeable producer writes, if any: the
/// consumer an aggregation's epilogue (it reads a `gnn.spmm` or
/// `gnn.reduce` result), the producer reading no graph op's value. Other
/// elementwise chains are left to the group former, whose edge pipelines
/// recompute their links where they are read (a merged link there would
/// be written instead).
OpOperand *mergeableInput(linalg::GenericOp consumer) {
  if (!allParallel(consumer) ||
      llvm::none_of(consumer.getDpsInputs(), [](Value v) {
        return v.getDefiningOp<SpmmOp>() || v.getDefiningOp<ReduceOp>();
      }))
    return nullptr;
  for (OpOperand *in : consumer.getDpsInputOperands()) {
    auto producer = in->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer->getBlock() != consumer->getBlock() ||
        producer->getNumResults() != 1 || !onlyUser(in->get(), consumer) ||
        !allParallel(producer) || readsGraphOp(producer))
      continue;
    Type element = getElementTypeOrSelf(in->get().getType());
    if (!element.isF32() && !element.isF64())
      continue; // (a storage type is rounded when written)
    if (linalg::areElementwiseOpsFusable(in))
      return in;
  }
  return nullptr;
}

struct GNNFuseElementwisePass
    : public mlir::gnn::impl::GNNFuseElementwiseBase<GNNFuseElementwisePass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Until no consumer takes a producer (a chain merges link by link).
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<linalg::GenericOp> consumers;
      getOperation().walk([&](linalg::GenericOp op) { consumers.push_back(op); });
      for (linalg::GenericOp consumer : consumers) {
        OpOperand *in = mergeableInput(consumer);
        if (!in)
          continue;
        auto producer = in->get().getDefiningOp<linalg::GenericOp>();
        // Its size queries ask its init, shaped as its result.
        for (Operation *user : llvm::make_early_inc_range(in->get().getUsers()))
          if (auto dim = dyn_cast<tensor::DimOp>(user))
            rewriter.modifyOpInPlace(dim, [&] {
              dim.getSourceMutable().set(producer.getDpsInitOperand(0)->get());
            });
        rewriter.setInsertionPoint(consumer);
        FailureOr<linalg::ElementwiseOpFusionResult> fused =
            linalg::fuseElementwiseOps(rewriter, in);
        if (failed(fused))
          continue;
        fused->fusedOp->setDiscardableAttrs(
            consumer->getDiscardableAttrDictionary());
        for (Value result : consumer->getResults())
          rewriter.replaceAllUsesWith(result,
                                      fused->replacements.lookup(result));
        rewriter.eraseOp(consumer);
        if (producer->use_empty())
          rewriter.eraseOp(producer);
        changed = true;
        break; // (the walk's list holds the erased consumer)
      }
    }
  }
};

} // namespace
