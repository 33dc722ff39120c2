//===- PullExtremumGrads.cpp - coarse extremum gradients as aggregations --===//
//
// Part of gnnc. The gradient of an unweighted max/min aggregation of bf16 or
// f16 rows (gnn.extremum_grad) pulled along the edges by an aggregation at
// their other end instead of routed by the winner codes.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"

#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNPULLEXTREMUMGRADS
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::builders;

namespace {
Value constantOf(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
}

/// Whether `user` only rounds `value` (an f32 tensor) to `type`: one input,
/// identity maps, all loops parallel, a body yielding `truncf` of the input.
bool onlyRounds(Operation *user, Value value, Type type) {
  auto generic = dyn_cast<linalg::GenericOp>(user);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getDpsInputOperand(0)->get() != value ||
      generic->getResult(0).getType() != type ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto trunc = yield.getValues()[0].getDefiningOp<arith::TruncFOp>();
  return trunc && trunc.getIn() == body.getArgument(0) &&
         generic.payloadUsesValueFromOperand(generic.getDpsInputOperand(0)) &&
         !generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0));
}

/// `gnn.extremum_grad` of bf16 or f16 rows: `dx[n] = sum over the edges
/// n -> d of (x[n] == y[d] ? g[d] : 0)` with `g = dy` where the code names
/// a winner, `dy / c` for a tie of c edges and NaN for a NaN extremum (an
/// f32 node tensor), summed at the edges' other end.
struct PullExtremumGrad : OpRewritePattern<ExtremumGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ExtremumGradOp op,
                                PatternRewriter &rewriter) const override {
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    if (!pullsExtremumGrads(inType.getElementType()))
      return rewriter.notifyMatchFailure(op, "routes f32 and f64 rows");
    auto sumType = cast<RankedTensorType>(op.getResult().getType());
    // Where the sums are only rounded to the rows' type, the aggregation
    // stores them so (its terms stay f32 in registers, gnn.rounds_on_store).
    // (Sizes taken of the sums are the rows' count either way.)
    Operation *rounding = nullptr;
    SmallVector<tensor::DimOp> sizes;
    for (Operation *user : op->getUsers()) {
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        sizes.push_back(dim);
      } else if (!rounding && onlyRounds(user, op.getResult(), inType)) {
        rounding = user;
      } else {
        rounding = nullptr;
        break;
      }
    }
    RankedTensorType resultType = rounding ? inType : sumType;

    GraphTB t{{rewriter, op.getLoc()}, op.getGraph()};
    EdgeEnd to = aggregationEnd(op.getReversed()), from = other(to);
    // Each node's share of its extremum's gradient, stored as the rows'
    // type: exact where one edge wins (`dy` is of that type), a tie's
    // `dy / c` rounded once; the pull then gathers a third fewer bytes per
    // edge than with an f32 share.
    Value share = t.map(
        op.getGrad(), {op.getGrad(), op.getWinner()},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Type f32 = a[1].getType();
          // A node id (>= 0) wins alone; -(c + 1) shares by c; a NaN code
          // (an ordered compare is false) gives NaN.
          Value named = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE,
                                              a[1], constantOf(b, l, f32, 0));
          Value count =
              arith::AddFOp::create(b, l, a[1], constantOf(b, l, f32, 1));
          Value part = arith::DivFOp::create(
              b, l, arith::NegFOp::create(b, l, a[0]), count);
          return arith::SelectOp::create(b, l, named, a[0], part);
        },
        inType.getElementType());
    // The edge's term: its share where its value attains the extremum
    // (unordered: a NaN extremum's share, NaN, goes to every edge).
    Value xe = t.gatherAt(from, op.getInput());
    Value terms = t.map(
        xe, {xe, t.gatherAt(to, op.getExtremum()), t.gatherAt(to, share)},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value eq = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UEQ,
                                           a[0], a[1]);
          return arith::SelectOp::create(b, l, eq, a[2],
                                         constantOf(b, l, a[2].getType(), 0));
        },
        resultType.getElementType());
    Value sums = t.reduceAt(from, terms, resultType);
    if (rounding) {
      for (tensor::DimOp dim : sizes)
        rewriter.modifyOpInPlace(dim,
                                 [&] { dim.getSourceMutable().assign(sums); });
      rewriter.replaceOp(rounding, sums);
      rewriter.eraseOp(op);
    } else {
      rewriter.replaceOp(op, sums);
    }
    return success();
  }
};

struct PullExtremumGrads
    : public mlir::gnn::impl::GNNPullExtremumGradsBase<PullExtremumGrads> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PullExtremumGrad>(patterns.getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

bool mlir::gnn::pullsExtremumGrads(Type type) {
  return isStorageFloatType(type);
}
