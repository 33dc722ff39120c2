//===- PullExtremumGrads.cpp - coarse extremum gradients as aggregations --===//
//
// Part of gnnc. The gradient of an unweighted max/min aggregation of bf16 or
// f16 rows (gnn.extremum_grad) pulled along the edges by an aggregation at
// their other end instead of routed by the winner codes.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

namespace {
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
    if (!isStorageFloatType(inType.getElementType()))
      return rewriter.notifyMatchFailure(op, "routes f32 and f64 rows");
    auto sumType = cast<RankedTensorType>(op.getResult().getType());
    Type f32 = sumType.getElementType();
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

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value graph = op.getGraph();
    EdgeEnd to = op.getReversed() ? EdgeEnd::src : EdgeEnd::dst;
    EdgeEnd from = op.getReversed() ? EdgeEnd::dst : EdgeEnd::src;
    auto emptyLike = [&](Value like, Type element) {
      auto t = cast<RankedTensorType>(like.getType());
      SmallVector<Value> dyn;
      for (int64_t i = 0; i < t.getRank(); ++i)
        if (t.isDynamicDim(i))
          dyn.push_back(tensor::DimOp::create(rewriter, loc, like, i));
      return tensor::EmptyOp::create(rewriter, loc, t.getShape(), element, dyn)
          .getResult();
    };
    auto elementwise = [&](Value like, ValueRange ins, Type element,
                           function_ref<Value(OpBuilder &, ValueRange)> body) {
      int64_t rank = cast<RankedTensorType>(like.getType()).getRank();
      SmallVector<AffineMap> maps(ins.size() + 1,
                                  AffineMap::getMultiDimIdentityMap(rank, ctx));
      SmallVector<utils::IteratorType> iters(rank,
                                             utils::IteratorType::parallel);
      auto type = cast<RankedTensorType>(like.getType()).clone(element);
      auto generic = linalg::GenericOp::create(
          rewriter, loc, TypeRange{type}, ins,
          ValueRange{emptyLike(like, element)}, maps, iters,
          [&](OpBuilder &b, Location l, ValueRange args) {
            SmallVector<Value> wide;
            for (Value a : args.drop_back())
              wide.push_back(
                  a.getType() == f32 ? a : arith::ExtFOp::create(b, l, f32, a));
            Value v = body(b, wide);
            if (element != f32)
              v = arith::TruncFOp::create(b, l, element, v);
            linalg::YieldOp::create(b, l, v);
          });
      if (element != f32)
        generic->setAttr(kRoundsOnStoreAttrName, rewriter.getUnitAttr());
      return generic.getResult(0);
    };
    auto constant = [&](OpBuilder &b, double v) {
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, v))
          .getResult();
    };

    // Each node's share of its extremum's gradient.
    Value share = elementwise(
        op.getGrad(), {op.getGrad(), op.getWinner()}, f32,
        [&](OpBuilder &b, ValueRange a) -> Value {
          // A node id (>= 0) wins alone; -(c + 1) shares by c; a NaN code
          // (an ordered compare is false) gives NaN.
          Value named = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                              a[1], constant(b, 0.0));
          Value count = arith::AddFOp::create(b, loc, a[1], constant(b, 1.0));
          Value part = arith::DivFOp::create(
              b, loc, arith::NegFOp::create(b, loc, a[0]), count);
          return arith::SelectOp::create(b, loc, named, a[0], part);
        });
    auto gather = [&](EdgeEnd end, Value nodes) -> Value {
      auto t = cast<RankedTensorType>(nodes.getType());
      SmallVector<int64_t> shape(t.getShape());
      shape[0] = ShapedType::kDynamic;
      return GatherOp::create(rewriter, loc,
                              RankedTensorType::get(shape, t.getElementType()),
                              end, graph, nodes, /*relation=*/false);
    };
    Value xe = gather(from, op.getInput());
    Value ye = gather(to, op.getExtremum());
    Value ge = gather(to, share);
    // The edge's term: its share where its value attains the extremum
    // (unordered: a NaN extremum's share, NaN, goes to every edge).
    Value terms = elementwise(
        xe, {xe, ye, ge}, resultType.getElementType(),
        [&](OpBuilder &b, ValueRange a) -> Value {
          Value eq = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UEQ,
                                           a[0], a[1]);
          return arith::SelectOp::create(b, loc, eq, a[2], constant(b, 0.0));
        });
    Value sums = ReduceOp::create(rewriter, loc, resultType, /*winner=*/Type(),
                                  ReduceKind::sum, graph, terms,
                                  /*reversed=*/from == EdgeEnd::src,
                                  /*relation=*/false)
                     .getResult();
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
