//===- VJPRules.cpp - derivative rules of gnn and upstream ops ------------===//
//
// Part of gnnc. VJPOpInterface external models. Every rule builds its
// operands' gradients from the result gradients with ops of the same
// dialects, so backward functions go through the same pipeline as forward
// ones. The graph-op rules (E = edges, N = nodes; `to` is the end an op
// aggregates at, `from` the other):
//
//   gather end x           dx = reduce sum (dy) at `end`
//   sddmm add/sub a, b     da = reduce sum (dy) at a's end, db = +-(same) at b's
//   sddmm mul a, b         da = reduce sum (dy * b[b's end]) at a's end, ...
//   sddmm dot a, b         da = spmm sum b weights(dy) into a's end, ...
//   edge_softmax s         ds = a * (da - gather(reduce sum (a * da)) + gather(dlse))
//   spmm sum x weights(w)  dx = spmm sum dy weights(w) reversed,
//                          dw = sddmm dot x, dy (x at `from`, dy at `to`)
//   spmm/reduce mean       as sum with dy / deg(to) (0 where deg = 0)
//   spmm/reduce max/min    dy shared equally by the edges attaining the
//                          extremum (PyTorch's scatter_reduce rule), with
//                          weights too (an edge's value is w * x[from]);
//                          the op's `share` result (gnn-autodiff adds it)
//                          is 1 / their number
//   reduce sum v           dv = gather dy at `to`
//   degree                 none
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/Transforms/Autodiff.h"

#include "TensorBuilders.h"

#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/Relu.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::builders;

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

namespace {

/// The ops' `winner` result (gnn-autodiff adds it to every differentiated
/// max/min), or a diagnostic.
LogicalResult checkWinner(Operation *op, Value winner) {
  if (winner)
    return success();
  return op->emitOpError("expects its 'winner' result to be differentiated "
                         "(gnn-autodiff adds it)");
}

/// Shares `dy` (node gradient of an extremum `y`) equally among the edges
/// whose value `xe` attains it, by the `winner` codes of a weighted spmm or
/// a reduce (-(c + 1) for c such edges; see gnn.spmm): returns the per-edge
/// gradient `xe == y ? dy / c : 0`, selected (not multiplied by a 0/1 mask)
/// so that an edge off the extremum gets 0 whatever the code; every edge of
/// a NaN extremum (code NaN) gets NaN, as in torch. It is
/// computed per edge from the gathered `dy` and code rather than from a
/// per-node `dy / c`, so that fused into the aggregation by `to` it needs no
/// node-sized temporary beside the codes (one row read more per edge
/// instead). The unweighted spmm routes by the winning neighbour instead
/// (gnn.extremum_grad).
FailureOr<Value> winnerShare(Operation *op, GraphTB &t, EdgeEnd to, Value xe,
                             Value y, Value dy, Value winner) {
  if (failed(checkWinner(op, winner)))
    return failure();
  Value ye = t.gatherAt(to, y);
  Value dye = t.gatherAt(to, dy);
  Value codee = t.gatherAt(to, winner);
  return t.map(xe, {xe, ye, dye, codee},
               [](OpBuilder &nb, Location nl, ValueRange a) {
                 Type ft = a[2].getType();
                 auto c = [&](double v) {
                   return arith::ConstantOp::create(nb, nl,
                                                    nb.getFloatAttr(ft, v))
                       .getResult();
                 };
                 // (Unordered: a NaN y selects the NaN part.)
                 Value eq = arith::CmpFOp::create(
                     nb, nl, arith::CmpFPredicate::UEQ, a[0], a[1]);
                 // dy / c = -dy / (code + 1).
                 Value plusOne = arith::AddFOp::create(nb, nl, a[3], c(1.0));
                 Value minus = arith::NegFOp::create(nb, nl, a[2]);
                 Value part = arith::DivFOp::create(nb, nl, minus, plusOne);
                 return arith::SelectOp::create(nb, nl, eq, part, c(0.0))
                     .getResult();
               });
}

//===----------------------------------------------------------------------===//
// gnn ops
//===----------------------------------------------------------------------===//

struct GatherVJP
    : public VJPOpInterface::ExternalModel<GatherVJP, GatherOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto g = cast<GatherOp>(op);
    GraphTB t{{b, op->getLoc()}, g.getGraph()};
    grads.assign(op->getNumOperands(), Value());
    grads[1] = t.reduceAt(g.getEnd(), dys[0], g.getInput().getType(),
                          g.getRelation());
    return success();
  }
};

struct SddmmVJP : public VJPOpInterface::ExternalModel<SddmmVJP, SddmmOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto s = cast<SddmmOp>(op);
    GraphTB t{{b, op->getLoc()}, s.getGraph()};
    Value a = s.getLhs(), c = s.getRhs(), dy = dys[0];
    EdgeEnd aEnd = s.getReversed() ? EdgeEnd::dst : EdgeEnd::src;
    EdgeEnd cEnd = other(aEnd);
    Value da, dc;
    switch (s.getKind()) {
    case SddmmKind::add:
      da = t.reduceAt(aEnd, dy, a.getType());
      dc = t.reduceAt(cEnd, dy, c.getType());
      break;
    case SddmmKind::sub:
      da = t.reduceAt(aEnd, dy, a.getType());
      dc = t.reduceAt(cEnd, t.neg(dy), c.getType());
      break;
    case SddmmKind::mul:
      da = t.reduceAt(aEnd, t.mul(dy, t.gatherAt(cEnd, c)), a.getType());
      dc = t.reduceAt(cEnd, t.mul(dy, t.gatherAt(aEnd, a)), c.getType());
      break;
    case SddmmKind::dot:
      // da[n] = sum over the edges with a's end at n of dy[e] * c[c's end].
      da = SpmmOp::create(b, t.loc, a.getType(), /*winner=*/Type(),
                          ReduceKind::sum, s.getGraph(), c, dy,
                          /*reversed=*/aEnd == EdgeEnd::src)
               .getResult();
      dc = SpmmOp::create(b, t.loc, c.getType(), /*winner=*/Type(),
                          ReduceKind::sum, s.getGraph(), a, dy,
                          /*reversed=*/cEnd == EdgeEnd::src)
               .getResult();
      break;
    }
    grads.assign(op->getNumOperands(), Value());
    grads[1] = da;
    grads[2] = dc;
    return success();
  }
};

/// The flash-attention identity. When the softmax's weights `a` feed only
/// `y = spmm sum x weights(a)` and `da` is that spmm's weight gradient
/// `sddmm dot x, dy`, the edge reduction sum_{e -> d} a[e] * da[e] is
/// sum_f dy[d, f] * y[d, f]: a node-sized product instead of an edge-sized
/// one. Returns it, or null when the pattern does not hold.
Value rowDot(GraphTB &t, EdgeSoftmaxOp softmax, Value da) {
  Value alpha = softmax.getResult();
  auto dot = da.getDefiningOp<SddmmOp>();
  if (!dot || dot.getKind() != SddmmKind::dot ||
      dot.getGraph() != softmax.getGraph())
    return Value();
  // The spmm whose weight gradient `da` is (a gradient summed from several
  // uses of the weights would not be a single sddmm).
  SpmmOp spmm;
  for (Operation *user : alpha.getUsers())
    if (auto candidate = dyn_cast<SpmmOp>(user);
        candidate && candidate.getWeights() == alpha &&
        candidate.getReduce() == ReduceKind::sum &&
        candidate.getGraph() == softmax.getGraph() &&
        candidate.getReversed() == softmax.getReversed() &&
        dot.getReversed() == candidate.getReversed() &&
        dot.getLhs() == candidate.getInput())
      spmm = candidate;
  if (!spmm)
    return Value();
  Value dy = dot.getRhs(), y = spmm.getResult();
  if (dy.getType() != y.getType())
    return Value();
  // sum over the last dimension of dy * y, a row per node, in the
  // arithmetic type: `da - d` cancels (d is a weighted mean of da), so d
  // rounded to bf16 would cost the edge scores' gradient all its digits.
  auto type = cast<RankedTensorType>(y.getType());
  int64_t rank = type.getRank();
  auto outType = withArithmeticElements(t.withRows(alpha));
  Type arith = outType.getElementType();
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < outType.getRank(); ++i)
    if (outType.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(t.b, t.loc, y, i));
  Value init = linalg::FillOp::create(
                   t.b, t.loc, t.constant(outType.getElementType(), 0.0),
                   tensor::EmptyOp::create(t.b, t.loc, outType.getShape(),
                                           outType.getElementType(), dyn)
                       .getResult())
                   .getResult(0);
  MLIRContext *ctx = t.b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<utils::IteratorType> iters(rank - 1,
                                         utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             t.b, t.loc, TypeRange{outType}, ValueRange{dy, y},
             ValueRange{init},
             ArrayRef<AffineMap>{id, id, leadingDims(rank, rank - 1, ctx)}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value p = arith::MulFOp::create(
                   nb, nl, TB::convertScalar(nb, nl, a[0], arith),
                   TB::convertScalar(nb, nl, a[1], arith));
               linalg::YieldOp::create(
                   nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], p)});
             })
      .getResult(0);
}

struct EdgeSoftmaxVJP
    : public VJPOpInterface::ExternalModel<EdgeSoftmaxVJP, EdgeSoftmaxOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto s = cast<EdgeSoftmaxOp>(op);
    GraphTB t{{b, op->getLoc()}, s.getGraph()};
    EdgeEnd to = aggregationEnd(s.getReversed());
    Value alpha = s.getResult();
    // The row sums in the arithmetic type, as rowDot's.
    Type nodeType = withArithmeticElements(t.withRows(alpha));
    // ds = alpha * (dalpha - gather(sum(alpha * dalpha)) + gather(dlse)).
    Value inner;
    if (Value da = dys[0]) {
      Value d = rowDot(t, s, da);
      if (!d)
        d = t.reduceAt(to, t.mul(alpha, da, getElementTypeOrSelf(nodeType)),
                       nodeType);
      inner = t.map(da, {da, t.gatherAt(to, d)},
                    [](OpBuilder &nb, Location nl, ValueRange x) {
                      return arith::SubFOp::create(nb, nl, x[0], x[1])
                          .getResult();
                    });
    }
    if (dys.size() > 1 && dys[1]) {
      Value fromLse = t.gatherAt(to, dys[1]);
      inner = inner ? t.add(inner, fromLse) : fromLse;
    }
    grads.assign(op->getNumOperands(), Value());
    grads[1] = t.mul(alpha, inner);
    return success();
  }
};

struct SpmmVJP : public VJPOpInterface::ExternalModel<SpmmVJP, SpmmOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto s = cast<SpmmOp>(op);
    GraphTB t{{b, op->getLoc()}, s.getGraph()};
    Value x = s.getInput(), w = s.getWeights(), dy = dys[0];
    EdgeEnd to = aggregationEnd(s.getReversed()), from = other(to);
    grads.assign(op->getNumOperands(), Value());
    unsigned wIndex = 2; // graph, input, weights
    switch (s.getReduce()) {
    case ReduceKind::mean:
      dy = t.divOrZero(dy, t.degreeAt(to, t.elementOf(dy)));
      [[fallthrough]];
    case ReduceKind::sum:
      grads[1] = SpmmOp::create(b, t.loc, x.getType(), /*winner=*/Type(),
                                ReduceKind::sum, s.getGraph(), dy, w,
                                !s.getReversed())
                     .getResult();
      if (w)
        grads[wIndex] = SddmmOp::create(b, t.loc, w.getType(), SddmmKind::dot,
                                        s.getGraph(), x, dy, s.getReversed());
      return success();
    case ReduceKind::max:
    case ReduceKind::min: {
      if (!w) {
        // dy to the winning edge's source: a thread per element of dy, no
        // edge values.
        if (failed(checkWinner(op, s.getWinner())))
          return failure();
        // The sums are of the arithmetic type (f32 for bf16 and f16 rows),
        // rounded to x's type once.
        auto sumType = withArithmeticElements(t.typeOf(x));
        Value sums = ExtremumGradOp::create(b, t.loc, sumType, s.getGraph(), x,
                                            s.getResult(), s.getWinner(), dy,
                                            s.getReversed())
                         .getResult();
        grads[1] = t.convert(sums, t.elementOf(x));
        return success();
      }
      // Each edge's value is w[e] * x[from(e)] (w broadcast over the
      // features); the edges attaining the extremum share dy equally. The
      // value is compared with the stored extremum, so it is rounded as the
      // forward's was (no gnn.rounds_on_store).
      Value xe = t.gatherAt(from, x);
      Value value = t.map(xe, {xe, w}, [](OpBuilder &nb, Location nl,
                                          ValueRange a) {
        return arith::MulFOp::create(nb, nl, a[0], a[1]).getResult();
      });
      value.getDefiningOp()->removeAttr(kRoundsOnStoreAttrName);
      FailureOr<Value> shared =
          winnerShare(op, t, to, value, s.getResult(), dy, s.getWinner());
      if (failed(shared))
        return failure();
      Value share = *shared;
      // dx[n] = sum over edges from n of share * w; dw[e] = sum_f share * x.
      grads[1] = t.reduceAt(from, t.map(share, {share, w},
                                        [](OpBuilder &nb, Location nl,
                                           ValueRange a) {
                                          return arith::MulFOp::create(
                                                     nb, nl, a[0], a[1])
                                              .getResult();
                                        }),
                            x.getType());
      grads[wIndex] = t.sumLast(t.mul(share, xe), w.getType());
      return success();
    }
    }
    return failure();
  }
};

struct ReduceVJP : public VJPOpInterface::ExternalModel<ReduceVJP, ReduceOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto r = cast<ReduceOp>(op);
    GraphTB t{{b, op->getLoc()}, r.getGraph()};
    EdgeEnd to = aggregationEnd(r.getReversed());
    Value dy = dys[0];
    grads.assign(op->getNumOperands(), Value());
    switch (r.getKind()) {
    case ReduceKind::mean:
      dy = t.divOrZero(dy, t.degreeAt(to, t.elementOf(dy)));
      [[fallthrough]];
    case ReduceKind::sum:
      grads[1] = t.gatherAt(to, dy, r.getRelation());
      return success();
    case ReduceKind::max:
    case ReduceKind::min: {
      FailureOr<Value> share =
          winnerShare(op, t, to, r.getInput(), r.getResult(), dy, r.getWinner());
      if (failed(share))
        return failure();
      grads[1] = *share;
      return success();
    }
    }
    return failure();
  }
};

struct DegreeVJP : public VJPOpInterface::ExternalModel<DegreeVJP, DegreeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &, ArrayRef<Value>,
                         SmallVectorImpl<Value> &grads) const {
    grads.assign(op->getNumOperands(), Value());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Scalar derivatives (forward mode inside a linalg body)
//===----------------------------------------------------------------------===//

/// Tangents of a body's values with respect to one block argument; a value
/// without an entry has tangent 0.
///
/// A tangent that a select (or a max/min) takes from one branch only is
/// *masked*: `select(c, t, 0)` (or `select(c, 0, t)`), the 0 a constant. What
/// is built from a masked tangent keeps the select outermost: `s * f`,
/// `s / f`, `-s`, a conversion and finally `dy * s` (`through`) become
/// `select(c, t * f, 0)` and so on. Where the branch is taken the product is
/// the same one, as rounded; where it is not the gradient is exactly 0,
/// whatever `dy` and the factors are, as PyTorch's `where` and `relu`
/// backward give (`dy * select(c, t, 0)` would be `NaN * 0 = NaN` for a NaN
/// `dy`). Only tangents are masked so: `t * relu(x)` multiplies by a primal
/// value that is 0, and a NaN `t` gives NaN there as in PyTorch. Tangents
/// masked by different conditions (two `where`s on one value, a select whose
/// branches both carry one) are summed as their terms (`sums`), each
/// distributed on its own: `select(c1, dy * t1, 0) + select(c2, dy * t2, 0)`.
class Tangents {
public:
  Tangents(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  llvm::DenseMap<Value, Value> of;

  Value get(Value v) const { return of.lookup(v); }
  Value c(Type t, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
  }
  /// x * y, a masked x (or y) distributed: select(c, x' * y, 0).
  Value mul(Value x, Value y) {
    if (keepsMasks(y) && !keepsMasks(x))
      std::swap(x, y);
    return through(x, [&](Value v) {
      return arith::MulFOp::create(b, loc, v, y).getResult();
    });
  }
  Value addOpt(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    // Two tangents masked by the same condition on the same side: one select
    // of their sum (the gradient stays exactly 0 where neither is taken).
    auto mx = masked.find(x), my = masked.find(y);
    if (mx != masked.end() && my != masked.end() &&
        mx->second.cond == my->second.cond &&
        mx->second.onTrue == my->second.onTrue) {
      Mask m = mx->second;
      return select(m.cond, m.onTrue,
                    arith::AddFOp::create(b, loc, m.t, my->second.t));
    }
    Value s = arith::AddFOp::create(b, loc, x, y);
    // Masked on both sides by different conditions: the sum is kept as its
    // two terms, each distributed on its own (`through`), so that where
    // neither branch is taken the gradient is 0 + 0, whatever dy is.
    if (keepsMasks(x) && keepsMasks(y))
      sums[s] = {x, y};
    return s;
  }
  /// `f(x)` for a tangent `x` that `f` scales (0 to 0): a masked `x` keeps
  /// its select outermost, `select(c, f(t), 0)`, nested masks each kept.
  Value through(Value x, llvm::function_ref<Value(Value)> f) {
    if (auto sum = sums.find(x); sum != sums.end()) {
      auto [p, q] = sum->second; // (copied: the recursion adds entries)
      // (one after the other: the order of the ops built must not be the
      // compiler's choice of argument evaluation order)
      Value tp = through(p, f);
      Value tq = through(q, f);
      return addOpt(tp, tq);
    }
    auto it = masked.find(x);
    if (it == masked.end())
      return f(x);
    Mask m = it->second;
    return select(m.cond, m.onTrue, through(m.t, f));
  }
  /// select(cond, t, 0) when `onTrue`, else select(cond, 0, t), recorded as
  /// masked.
  Value select(Value cond, bool onTrue, Value t) {
    Value zero = c(t.getType(), 0.0);
    Value s = arith::SelectOp::create(b, loc, cond, onTrue ? t : zero,
                                      onTrue ? zero : t);
    masked[s] = Mask{cond, t, onTrue};
    return s;
  }
  /// The tangent of `select(cond, a, b)` given the branches' tangents (at
  /// least one not null): masked when one branch has none.
  Value branches(Value cond, Value ta, Value tb) {
    if (!tb)
      return select(cond, /*onTrue=*/true, ta);
    if (!ta)
      return select(cond, /*onTrue=*/false, tb);
    // Both branches' tangents, one of them masked: each branch masked by
    // this condition too, summed (its mask kept where it is not taken).
    if (keepsMasks(ta) || keepsMasks(tb)) {
      Value sa = select(cond, /*onTrue=*/true, ta);
      Value sb = select(cond, /*onTrue=*/false, tb);
      return addOpt(sa, sb);
    }
    return arith::SelectOp::create(b, loc, cond, ta, tb);
  }
  /// -x and x / y for a tangent x, a masked x distributed.
  Value neg(Value x) {
    return through(
        x, [&](Value v) { return arith::NegFOp::create(b, loc, v).getResult(); });
  }
  Value div(Value x, Value y) {
    return through(x, [&](Value v) {
      return arith::DivFOp::create(b, loc, v, y).getResult();
    });
  }
  /// x * f, or null when x is null.
  Value scale(Value x, Value f) { return x ? mul(x, f) : Value(); }

  /// Propagates through `op` (already cloned: `args` its operands, `res` its
  /// result); fails on an op with a nonzero tangent and no rule.
  LogicalResult visit(Operation *op, ValueRange args, Value res) {
    SmallVector<Value> t;
    bool any = false;
    for (Value a : args) {
      t.push_back(get(a));
      any |= static_cast<bool>(t.back());
    }
    if (!any || !res || !isa<FloatType>(res.getType()))
      return success();
    Type ty = res.getType();
    Value out;
    if (isa<arith::AddFOp>(op))
      out = addOpt(t[0], t[1]);
    else if (isa<arith::SubFOp>(op))
      out = addOpt(t[0], t[1] ? neg(t[1]) : Value());
    else if (isa<arith::MulFOp>(op)) {
      // (each term built in turn: the ops' order must not be the compiler's
      // choice of argument evaluation order)
      Value da = scale(t[0], args[1]);
      Value db = scale(t[1], args[0]);
      out = addOpt(da, db);
    } else if (isa<arith::DivFOp>(op)) {
      // d(a/b) = da/b - a db / b^2 = (da - res db) / b
      Value num = addOpt(t[0], t[1] ? neg(mul(t[1], res)) : Value());
      out = div(num, args[1]);
    } else if (isa<arith::NegFOp>(op))
      out = neg(t[0]);
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                 arith::MinNumFOp>(op)) {
      bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
      Value first = arith::CmpFOp::create(
          b, loc, isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE,
          args[0], args[1]);
      out = branches(first, t[0], t[1]);
    } else if (isa<arith::SelectOp>(op)) {
      out = branches(args[0], t[1], t[2]);
    } else if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      bool ext = isa<arith::ExtFOp>(op);
      out = through(t[0], [&](Value v) -> Value {
        if (ext)
          return arith::ExtFOp::create(b, loc, ty, v);
        return arith::TruncFOp::create(b, loc, ty, v);
      });
    } else if (isa<math::ExpOp>(op))
      out = mul(t[0], res);
    else if (isa<math::Exp2Op>(op))
      out = mul(t[0], mul(res, c(ty, std::log(2.0))));
    else if (isa<math::ExpM1Op>(op))
      out = mul(t[0], arith::AddFOp::create(b, loc, res, c(ty, 1.0)));
    else if (isa<math::LogOp>(op))
      out = div(t[0], args[0]);
    else if (isa<math::Log2Op>(op))
      out = div(t[0], mul(args[0], c(ty, std::log(2.0))));
    else if (isa<math::Log1pOp>(op))
      out = div(t[0], arith::AddFOp::create(b, loc, args[0], c(ty, 1.0)));
    else if (isa<math::TanhOp>(op))
      out = mul(t[0], arith::SubFOp::create(b, loc, c(ty, 1.0), mul(res, res)));
    else if (isa<math::SqrtOp>(op))
      out = div(t[0], mul(c(ty, 2.0), res));
    else if (isa<math::RsqrtOp>(op))
      out = mul(t[0], mul(c(ty, -0.5), mul(res, mul(res, res))));
    else if (isa<math::AbsFOp>(op)) {
      Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                        args[0], c(ty, 0.0));
      out = through(t[0], [&](Value v) -> Value {
        return arith::SelectOp::create(
            b, loc, pos, v, arith::NegFOp::create(b, loc, v).getResult());
      });
    } else if (isa<math::SinOp>(op))
      out = mul(t[0], math::CosOp::create(b, loc, args[0]));
    else if (isa<math::CosOp>(op))
      out = mul(t[0], arith::NegFOp::create(
                          b, loc, math::SinOp::create(b, loc, args[0]))
                          .getResult());
    else if (isa<math::ErfOp>(op)) {
      Value sq = mul(args[0], args[0]);
      Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, sq));
      out = mul(t[0], mul(c(ty, 2.0 / std::sqrt(M_PI)), e));
    } else if (isa<math::PowFOp>(op)) {
      // d(a^p) = p a^(p-1) da + a^p log(a) dp
      Value da, dp;
      if (t[0]) {
        Value pm1 = arith::SubFOp::create(b, loc, args[1], c(ty, 1.0));
        da = mul(t[0], mul(args[1], math::PowFOp::create(b, loc, args[0], pm1)));
      }
      if (t[1])
        dp = mul(t[1], mul(res, math::LogOp::create(b, loc, args[0])));
      out = addOpt(da, dp);
    } else if (isa<math::FmaOp>(op)) {
      Value da = scale(t[0], args[1]);
      Value db = scale(t[1], args[0]);
      out = addOpt(addOpt(da, db), t[2]);
    } else if (isa<math::FloorOp, math::CeilOp>(op))
      out = Value();
    else
      return op->emitOpError()
             << "has no derivative rule (in the body of a linalg op on the "
                "path to a differentiable argument)";
    if (out)
      of[res] = out;
    return success();
  }

private:
  struct Mask {
    Value cond, t;
    bool onTrue;
  };
  OpBuilder &b;
  Location loc;
  /// The masked tangents: select(cond, t, 0) (onTrue) or select(cond, 0, t).
  llvm::DenseMap<Value, Mask> masked;
  /// Sums of two tangents each masked (or such a sum), by different
  /// conditions: their terms.
  llvm::DenseMap<Value, std::pair<Value, Value>> sums;
  /// Whether `t` is masked or such a sum (its masks kept by `through`).
  bool keepsMasks(Value t) const { return masked.count(t) || sums.count(t); }
};

//===----------------------------------------------------------------------===//
// linalg and tensor ops
//===----------------------------------------------------------------------===//

/// Erases `fill` (zeros a gradient was to start from) and its
/// `tensor.empty` when nothing reads them any more.
void eraseUnusedZeros(linalg::FillOp fill) {
  if (!fill || !fill->use_empty())
    return;
  Operation *empty = fill.getOutputs()[0].getDefiningOp();
  fill->erase();
  if (empty && empty->use_empty())
    empty->erase();
}

/// Whether result `i` of a reduction body is a sum: it yields `out_i +
/// term` with `out_i` read nowhere else.
bool isSumBody(linalg::GenericOp g, unsigned i) {
  Block &body = g.getRegion().front();
  BlockArgument out = body.getArgument(g.getNumDpsInputs() + i);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[i].getDefiningOp<arith::AddFOp>();
  return add && out.hasOneUse() &&
         (add.getLhs() == out || add.getRhs() == out);
}

/// Removes the body's dead ops, then the inputs the body no longer reads (the
/// forward computation cloned into a gradient body is mostly dead), so that
/// the backward keeps no tensor it does not need.
linalg::GenericOp dropUnusedInputs(OpBuilder &b, linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  SmallVector<unsigned> dead;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (body.getArgument(in->getOperandNumber()).use_empty()) {
      dead.push_back(in->getOperandNumber());
      continue;
    }
    ins.push_back(in->get());
    maps.push_back(g.getMatchingIndexingMap(in));
  }
  if (dead.empty())
    return g;
  // Every loop must stay indexed by some operand (its extent comes from one).
  llvm::SmallBitVector covered(g.getNumLoops());
  SmallVector<AffineMap> kept = maps;
  for (OpOperand &out : g.getDpsInitsMutable())
    kept.push_back(g.getMatchingIndexingMap(&out));
  for (AffineMap map : kept)
    for (AffineExpr e : map.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        covered.set(d.getPosition());
  if (!covered.all())
    return g;
  for (OpOperand &out : g.getDpsInitsMutable())
    maps.push_back(g.getMatchingIndexingMap(&out));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(g);
  auto lean = linalg::GenericOp::create(
      b, g.getLoc(), g.getResultTypes(), ins, g.getDpsInits(), maps,
      g.getIteratorTypesArray());
  lean.getRegion().takeBody(g.getRegion());
  lean->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  Block &moved = lean.getRegion().front();
  for (unsigned i : llvm::reverse(dead))
    moved.eraseArgument(i);
  g->replaceAllUsesWith(lean->getResults());
  g->erase();
  return lean;
}

/// linalg.generic: operand k's gradient is, at each loop point, the sum over
/// the results of dy_i * d(yield_i)/d(arg_k) (the body differentiated in
/// forward mode), summed over the loops operand k does not index. In a
/// reduction (every result a sum `out + term`) the init gets dy itself.
struct GenericVJP
    : public VJPOpInterface::ExternalModel<GenericVJP, linalg::GenericOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto g = cast<linalg::GenericOp>(op);
    Location loc = op->getLoc();
    // An active generic reads a tensor, and linalg's verifier rejects mixed
    // tensor and buffer operands.
    assert(g.hasPureTensorSemantics() && "an active generic is on tensors");
    bool reduction = g.getNumReductionLoops() > 0;
    unsigned numIn = g.getNumDpsInputs(), numOut = g.getNumDpsInits();
    for (unsigned i = 0; i < numOut && reduction; ++i)
      if (!isSumBody(g, i))
        return op->emitOpError()
               << "has no derivative rule: result " << i
               << " of a reduction must be yielded as `out + term` (a sum)";
    Block &body = g.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    grads.assign(op->getNumOperands(), Value());
    TB t{b, loc};
    MLIRContext *ctx = b.getContext();
    // The result gradients that are not zero, with their maps.
    SmallVector<unsigned> outs;
    for (unsigned i = 0; i < numOut; ++i)
      if (dys[i])
        outs.push_back(i);
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned k = operand.getOperandNumber();
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      BlockArgument arg = body.getArgument(k);
      if (arg.use_empty())
        continue;
      if (k >= numIn && reduction) {
        grads[k] = dys[k - numIn];
        continue;
      }
      // The gradient's map is the operand's: loops, and constant 0s on
      // size-1 dimensions (a broadcast scalar; the gradient sums there).
      AffineMap m = g.getMatchingIndexingMap(&operand);
      for (auto [r, e] : llvm::enumerate(m.getResults())) {
        auto cst = dyn_cast<AffineConstantExpr>(e);
        if (isa<AffineDimExpr>(e) ||
            (cst && cst.getValue() == 0 && type.getDimSize(r) == 1))
          continue;
        return op->emitOpError()
               << "has no derivative rule for operand " << k
               << ": its indexing map " << AffineMapAttr::get(m)
               << " is not made of loops (and constant 0s of size-1 "
                  "dimensions)";
      }
      AffineMap gm = m;
      if (!gm.isProjectedPermutation(/*allowZeroInResults=*/true))
        return op->emitOpError()
               << "has no derivative rule for operand " << k
               << ": its indexing map " << AffineMapAttr::get(m)
               << " reads a loop twice";
      // The loops the gradient indexes (parallel) come first, the summed
      // ones after, in their original orders (what the CUDA backend runs).
      // The parallel ones in the order the gradient's dimensions read them
      // (its output map is then the identity on them).
      unsigned numLoops = g.getNumLoops();
      SmallVector<unsigned> newPos(numLoops, numLoops);
      SmallVector<utils::IteratorType> iters;
      for (AffineExpr e : gm.getResults())
        if (auto d = dyn_cast<AffineDimExpr>(e)) {
          newPos[d.getPosition()] = iters.size();
          iters.push_back(utils::IteratorType::parallel);
        }
      for (unsigned d = 0; d < numLoops; ++d)
        if (newPos[d] == numLoops) {
          newPos[d] = iters.size();
          iters.push_back(utils::IteratorType::reduction);
        }
      SmallVector<AffineExpr> toNew;
      for (unsigned d = 0; d < numLoops; ++d)
        toNew.push_back(getAffineDimExpr(newPos[d], ctx));
      auto reorder = [&](AffineMap map) {
        return map.replaceDimsAndSymbols(toNew, {}, numLoops, 0);
      };
      // The operands as they are, except inits the body does not read:
      // their result gradient stands in (same shape), so that the backward
      // does not keep them.
      SmallVector<Value> ins(op->getOperands());
      for (unsigned i = 0; i < numOut; ++i)
        if (body.getArgument(numIn + i).use_empty() && dys[i])
          ins[numIn + i] = dys[i];
      // relu of a value an op made: its mask read from the result
      // (isReluOfInput: the same mask), which also sizes the gradient; the
      // input is then read by nothing, and a training forward that keeps
      // the result (the next Linear's weight gradient reads it) need not
      // keep the input too. Either is one value kept where the result is
      // not kept anyway. A function argument is kept for nothing (the
      // caller holds it): read as it is.
      bool reluMask =
          k == 0 && isReluOfInput(g) && !isa<BlockArgument>(operand.get());
      if (reluMask)
        ins[0] = g->getResult(0);
      SmallVector<AffineMap> maps;
      for (AffineMap map : g.getIndexingMapsArray())
        maps.push_back(reorder(map));
      for (unsigned i : outs) {
        ins.push_back(dys[i]);
        maps.push_back(
            reorder(g.getMatchingIndexingMap(g.getDpsInitOperand(i))));
      }
      maps.push_back(reorder(gm));
      Value init = t.zerosLike(reluMask ? ins[0] : operand.get());
      // Whether the gradient sums over loops (a broadcast operand, a
      // reduction): then its terms add into the zeros. Otherwise each of its
      // elements is one iteration's sum of terms, which needs no zeros to
      // start from (and `0 + t` would turn a -0 term into +0, where
      // PyTorch's autograd passes a single gradient on as it is): the init
      // is not read, so the group former can absorb the generic into its
      // producer's kernel or merge it with an identical one (GCN's
      // backward: dinv * dy made once, not twice).
      bool sums = llvm::is_contained(iters, utils::IteratorType::reduction);
      LogicalResult status = success();
      // Whether the gradient is one result's dy as it is: a single term
      // dy_i * 1 (operand k enters that result through sums only), every
      // loop parallel, dy_i read through the gradient's own map and of its
      // type. Then dy_i stands in and no generic copies it (the two terms
      // of an `a + b` each get dy).
      unsigned terms = 0, unitOut = 0;
      bool unitTerm = false;
      auto gradOp = linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
          iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
            IRMapping map;
            for (unsigned i = 0; i < body.getNumArguments(); ++i)
              map.map(body.getArgument(i), args[i]);
            Tangents tan(nb, nl);
            Value seed = arith::ConstantOp::create(
                nb, nl, nb.getFloatAttr(args[k].getType(), 1.0));
            tan.of[args[k]] = seed;
            for (Operation &inner : body.without_terminator()) {
              Operation *clone = nb.clone(inner, map);
              if (auto index = dyn_cast<linalg::IndexOp>(clone))
                index.setDim(newPos[index.getDim()]);
              SmallVector<Value> cargs(clone->getOperands());
              Value res = clone->getNumResults() == 1 ? clone->getResult(0)
                                                      : Value();
              if (failed(tan.visit(clone, cargs, res)))
                status = failure();
            }
            // acc + dy * d for each result: the product in the widest
            // arithmetic type of the three (f32 for halves: a bf16 result
            // can carry an f32 argument's gradient), then in acc's type,
            // as the `out + term` sum the lowering accumulates widened. A
            // masked d keeps its select outside the product: exactly 0 where
            // its branch is not taken, whatever dy is (`Tangents`).
            Value zeros = args.back(), acc = sums ? zeros : Value();
            for (auto [j, i] : llvm::enumerate(outs)) {
              Value d = tan.get(map.lookupOrDefault(yield.getValues()[i]));
              if (!d)
                continue;
              ++terms;
              unitTerm = d == seed;
              unitOut = j;
              Value dyS = args[body.getNumArguments() + j];
              Type wide = arithmeticType(zeros.getType());
              for (Value v : {dyS, d})
                if (Type a = arithmeticType(v.getType());
                    a.getIntOrFloatBitWidth() > wide.getIntOrFloatBitWidth())
                  wide = a;
              Value term = tan.through(d, [&](Value v) {
                Value p = arith::MulFOp::create(
                    nb, nl, TB::convertScalar(nb, nl, dyS, wide),
                    TB::convertScalar(nb, nl, v, wide));
                return TB::convertScalar(nb, nl, p, zeros.getType());
              });
              acc = acc ? arith::AddFOp::create(nb, nl, acc, term).getResult()
                        : term;
            }
            linalg::YieldOp::create(nb, nl, acc ? acc : zeros);
          });
      if (failed(status))
        return failure();
      if (terms == 1 && unitTerm && !reduction) {
        Value dy = dys[outs[unitOut]];
        AffineMap dyMap = maps[op->getNumOperands() + unitOut];
        if (dyMap == maps.back() && dy.getType() == init.getType()) {
          // The zeros made for the generic's init go with it.
          gradOp->erase();
          eraseUnusedZeros(init.getDefiningOp<linalg::FillOp>());
          grads[k] = dy;
          continue;
        }
      }
      if (!gradOp.payloadUsesValueFromOperand(gradOp.getDpsInitOperand(0))) {
        // (its zeros unread: an empty tensor stands in)
        auto fill = init.getDefiningOp<linalg::FillOp>();
        gradOp.getDpsInitOperand(0)->set(fill.getOutputs()[0]);
        eraseUnusedZeros(fill);
      }
      if (isStorageFloatType(getElementTypeOrSelf(gradOp.getResult(0))))
        gradOp->setAttr(kRoundsOnStoreAttrName, b.getUnitAttr());
      gradOp = dropUnusedInputs(b, gradOp);
      grads[k] = gradOp.getResult(0);
    }
    return success();
  }
};

struct MatmulVJP
    : public VJPOpInterface::ExternalModel<MatmulVJP, linalg::MatmulOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto mm = cast<linalg::MatmulOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    AffineExpr d0, d1, d2;
    bindDims(ctx, d0, d1, d2);
    // C += A Bᵀ (B [n, k]: a Linear's weight as PyTorch stores it).
    bool transB = false;
    if (mm.hasUserDefinedMaps()) {
      auto maps = mm.getIndexingMapsArray();
      transB = maps.size() == 3 &&
               maps[0] == AffineMap::get(3, 0, {d0, d2}, ctx) &&
               maps[1] == AffineMap::get(3, 0, {d1, d2}, ctx) &&
               maps[2] == AffineMap::get(3, 0, {d0, d1}, ctx);
    }
    if (!mm.hasPureTensorSemantics() || (mm.hasUserDefinedMaps() && !transB))
      return op->emitOpError("has no derivative rule: expects C += A B or "
                             "C += A Bᵀ on tensors");
    TB t{b, loc};
    Value a = mm.getDpsInputs()[0], bm = mm.getDpsInputs()[1], dc = dys[0];
    // Each gradient is a matmul with one operand transposed (cuBLAS GEMMs
    // with a transpose flag on the GPU): the weight gradient's sum over
    // every node is one GEMM, not a reduction per weight element.
    auto matmul = [&](Value x, AffineMap mx, Value y, AffineMap my,
                      Value like) {
      auto op = linalg::MatmulOp::create(b, loc, TypeRange{like.getType()},
                                         ValueRange{x, y},
                                         ValueRange{t.zerosLike(like)});
      op.setIndexingMapsAttr(b.getAffineMapArrayAttr(
          {mx, my, AffineMap::get(3, 0, {d0, d1}, ctx)}));
      return op.getResult(0);
    };
    grads.assign(op->getNumOperands(), Value());
    if (transB) {
      // dA[i, k] = sum_j dC[i, j] B[j, k]: dC B   (loops i, k, j)
      grads[0] = matmul(dc, AffineMap::get(3, 0, {d0, d2}, ctx), bm,
                        AffineMap::get(3, 0, {d2, d1}, ctx), a);
      // dB[j, k] = sum_i dC[i, j] A[i, k]: dCᵀ A   (loops j, k, i)
      grads[1] = matmul(dc, AffineMap::get(3, 0, {d2, d0}, ctx), a,
                        AffineMap::get(3, 0, {d2, d1}, ctx), bm);
    } else {
      // dA[i, k] = sum_j dC[i, j] B[k, j]: dC Bᵀ   (loops i, k, j)
      grads[0] = matmul(dc, AffineMap::get(3, 0, {d0, d2}, ctx), bm,
                        AffineMap::get(3, 0, {d1, d2}, ctx), a);
      // dB[k, j] = sum_i A[i, k] dC[i, j]: Aᵀ dC   (loops k, j, i)
      grads[1] = matmul(a, AffineMap::get(3, 0, {d2, d0}, ctx), dc,
                        AffineMap::get(3, 0, {d2, d1}, ctx), bm);
    }
    // C0 is added as it is.
    grads[2] = dc;
    return success();
  }
};

/// Ops whose operands never get a gradient (fills overwrite their init,
/// sizes and constants carry none).
template <typename OpTy>
struct NoGradVJP
    : public VJPOpInterface::ExternalModel<NoGradVJP<OpTy>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &, ArrayRef<Value>,
                         SmallVectorImpl<Value> &grads) const {
    grads.assign(op->getNumOperands(), Value());
    return success();
  }
};

struct ExpandVJP
    : public VJPOpInterface::ExternalModel<ExpandVJP, tensor::ExpandShapeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto e = cast<tensor::ExpandShapeOp>(op);
    grads.assign(op->getNumOperands(), Value());
    grads[0] = tensor::CollapseShapeOp::create(b, op->getLoc(),
                                               e.getSrcType(), dys[0],
                                               e.getReassociationIndices());
    return success();
  }
};

struct CollapseVJP
    : public VJPOpInterface::ExternalModel<CollapseVJP,
                                           tensor::CollapseShapeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto c = cast<tensor::CollapseShapeOp>(op);
    Location loc = op->getLoc();
    RankedTensorType src = c.getSrcType();
    SmallVector<OpFoldResult> shape;
    for (int64_t i = 0; i < src.getRank(); ++i)
      shape.push_back(src.isDynamicDim(i)
                          ? OpFoldResult(tensor::DimOp::create(
                                b, loc, c.getSrc(), i).getResult())
                          : OpFoldResult(b.getIndexAttr(src.getDimSize(i))));
    grads.assign(op->getNumOperands(), Value());
    grads[0] = tensor::ExpandShapeOp::create(b, loc, src, dys[0],
                                             c.getReassociationIndices(), shape);
    return success();
  }
};

struct CastVJP : public VJPOpInterface::ExternalModel<CastVJP, tensor::CastOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &grads) const {
    auto c = cast<tensor::CastOp>(op);
    grads.assign(op->getNumOperands(), Value());
    grads[0] = tensor::CastOp::create(b, op->getLoc(), c.getSource().getType(),
                                      dys[0]);
    return success();
  }
};

} // namespace

Value mlir::gnn::buildZerosLike(OpBuilder &b, Location loc, Value like) {
  return TB{b, loc}.zerosLike(like);
}

namespace {
/// A sum aggregation that nothing uses yet: `spmm sum x [weights(w)]` or
/// `reduce sum v`, seen as the per-edge values it adds up at one end.
struct EdgeSum {
  Operation *op = nullptr;
  Value graph;
  bool reversed = false;
  /// `spmm`: its input and optional weights; `reduce`: its input.
  Value input, weights;
};

std::optional<EdgeSum> edgeSumOf(Value v) {
  if (!v.use_empty())
    return std::nullopt;
  if (auto s = v.getDefiningOp<SpmmOp>();
      s && s.getReduce() == ReduceKind::sum && !s.getWinner())
    return EdgeSum{s, s.getGraph(), s.getReversed(), s.getInput(),
                   s.getWeights()};
  if (auto r = v.getDefiningOp<ReduceOp>();
      r && r.getKind() == ReduceKind::sum && !r.getWinner())
    return EdgeSum{r, r.getGraph(), r.getReversed(), r.getInput(), Value()};
  return std::nullopt;
}

/// The values `s` adds up, one row per edge.
Value edgeValues(GraphTB &t, const EdgeSum &s) {
  if (isa<ReduceOp>(s.op))
    return s.input;
  Value xe = t.gatherAt(other(aggregationEnd(s.reversed)), s.input);
  return s.weights ? t.mul(xe, s.weights) : xe;
}
} // namespace

Value mlir::gnn::buildSum(OpBuilder &b, Location loc, Value a, Value c) {
  // Two gradients that sum edge values onto the same end of one graph (a
  // node used both as a value and in a score, GATv2's xr): one `reduce sum`
  // of the edges' summed values. One walk of the edges instead of two, and
  // no node-sized sum stored (rounded, for a half type) before the other is
  // added to it: where the two cancel, that rounding would be the result's
  // whole error.
  std::optional<EdgeSum> x = edgeSumOf(a), y = edgeSumOf(c);
  if (x && y && x->op != y->op && x->graph == y->graph &&
      x->reversed == y->reversed && a.getType() == c.getType()) {
    GraphTB t{{b, loc}, x->graph};
    Value values = t.add(edgeValues(t, *x), edgeValues(t, *y));
    Value sum = t.reduceAt(aggregationEnd(x->reversed), values, a.getType());
    x->op->erase();
    y->op->erase();
    return sum;
  }
  // A product from zeros (a matmul's gradient) adds into the other term
  // instead: the matmul takes it as its init (on CUDA one GEMM with beta =
  // 1, in place where the term's buffer is free), so no elementwise sum
  // runs over the two. Read nowhere else yet: it is the gradient just made.
  for (auto [acc, prod] : {std::pair{a, c}, std::pair{c, a}}) {
    auto mm = prod.getDefiningOp<linalg::MatmulOp>();
    if (!mm || !prod.use_empty() || acc.getType() != prod.getType())
      continue;
    auto fill = mm.getOutputs()[0].getDefiningOp<linalg::FillOp>();
    auto zero = fill ? fill.getInputs()[0].getDefiningOp<arith::ConstantOp>()
                     : arith::ConstantOp();
    auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
    if (!value || !value.getValue().isPosZero())
      continue;
    auto into = cast<linalg::MatmulOp>(b.clone(*mm));
    into.getDpsInitsMutable()[0].set(acc);
    mm->erase();
    eraseUnusedZeros(fill);
    return into.getResult(0);
  }
  return TB{b, loc}.add(a, c);
}

void mlir::gnn::registerVJPModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GNNDialect *) {
    GatherOp::attachInterface<GatherVJP>(*ctx);
    SddmmOp::attachInterface<SddmmVJP>(*ctx);
    EdgeSoftmaxOp::attachInterface<EdgeSoftmaxVJP>(*ctx);
    SpmmOp::attachInterface<SpmmVJP>(*ctx);
    ReduceOp::attachInterface<ReduceVJP>(*ctx);
    DegreeOp::attachInterface<DegreeVJP>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::GenericOp::attachInterface<GenericVJP>(*ctx);
    linalg::MatmulOp::attachInterface<MatmulVJP>(*ctx);
    linalg::FillOp::attachInterface<NoGradVJP<linalg::FillOp>>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExpandShapeOp::attachInterface<ExpandVJP>(*ctx);
    tensor::CollapseShapeOp::attachInterface<CollapseVJP>(*ctx);
    tensor::CastOp::attachInterface<CastVJP>(*ctx);
    tensor::EmptyOp::attachInterface<NoGradVJP<tensor::EmptyOp>>(*ctx);
    tensor::DimOp::attachInterface<NoGradVJP<tensor::DimOp>>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    arith::ConstantOp::attachInterface<NoGradVJP<arith::ConstantOp>>(*ctx);
  });
}
