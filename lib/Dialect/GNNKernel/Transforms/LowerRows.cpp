//===- LowerRows.cpp - row-parallel groups to gnnk kernels ----------------===//
//
// Part of gnnc. Edge softmax and aggregations (spmm, reduce, with fused edge
// producer chains and elementwise consumers): a team of lanes per row,
// `gnnk.for_edges` over the row's edges with the accumulators carried and a
// merge region, `gnnk.team_reduce` across the team's edge groups.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"
#include "gnn/Dialect/GNN/IR/GNNDomain.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gnnk;
using gnn::KernelGroupOp;

LanePartition mlir::gnnk::partitionRow(int64_t row, int64_t lanes,
                                      int64_t vec) {
  LanePartition p;
  while (p.featureLanes < lanes && p.featureLanes * vec < row)
    p.featureLanes <<= 1;
  p.groups = lanes / p.featureLanes;
  p.chunk = p.featureLanes * vec;
  p.chunks = (row + p.chunk - 1) / p.chunk;
  return p;
}

RowTraversal mlir::gnnk::traverse(KernelBuilder &kb, bool reversed,
                                  Value row) {
  RowTraversal t;
  t.ptr = kb.graph(reversed ? "csc_col_ptr" : "csr_row_ptr");
  t.nbrs = kb.graph(reversed ? "csc_row" : "csr_col");
  t.perm = reversed ? kb.graph("csc_to_csr") : Value();
  t.begin = kb.loadIndex(t.ptr, row);
  t.end = kb.loadIndex(t.ptr, kb.add(row, kb.idx(1)));
  return t;
}

ForEdgesOp mlir::gnnk::edgeLoop(
    KernelBuilder &kb, const RowTraversal &t, Value begin, Value step,
    ValueRange inits, bool reversed, Value row,
    function_ref<FailureOr<SmallVector<Value>>(const EdgeRef &, ValueRange)>
        body,
    LogicalResult &status) {
  OpBuilder &b = kb.b;
  auto loop = ForEdgesOp::create(b, kb.loc, inits.getTypes(), begin, t.end,
                                 step, t.nbrs, t.perm, inits, IntegerAttr());
  Block *block = new Block();
  loop.getBody().push_back(block);
  Value slot = block->addArgument(b.getIndexType(), kb.loc);
  Value nbr = block->addArgument(b.getIndexType(), kb.loc);
  for (Value v : inits)
    block->addArgument(v.getType(), kb.loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  EdgeRef e{slot, reversed ? row : nbr, reversed ? nbr : row};
  FailureOr<SmallVector<Value>> next =
      body(e, block->getArguments().drop_front(2));
  if (failed(next)) {
    status = failure();
    YieldOp::create(b, kb.loc, block->getArguments().drop_front(2));
    return loop;
  }
  YieldOp::create(b, kb.loc, *next);
  status = success();
  return loop;
}

/// The row indices (after the leading dimension) of the `n` consecutive
/// elements of a row of `type` from flat position `first`, a multiple of
/// `n`. When `n` divides the innermost dimension they share every index but
/// the last, so that a value they all read at the outer indices (a head's
/// score, an edge weight) is evaluated once for them.
static SmallVector<SmallVector<Value>>
runIndices(KernelBuilder &kb, RankedTensorType type, Value first, int64_t n) {
  SmallVector<SmallVector<Value>> out;
  int64_t innermost = type.getRank() > 1 ? type.getShape().back() : 1;
  if (innermost % n) {
    for (int64_t v = 0; v < n; ++v) {
      SmallVector<Value> idx =
          kb.rowIndices(first, kb.add(first, kb.idx(v)), type);
      out.push_back(SmallVector<Value>(llvm::drop_begin(idx)));
    }
    return out;
  }
  SmallVector<Value> base(llvm::drop_begin(kb.rowIndices(first, first, type)));
  for (int64_t v = 0; v < n; ++v) {
    out.push_back(base);
    if (v)
      out.back().back() = kb.add(base.back(), kb.idx(v));
  }
  return out;
}

std::pair<Value, Value> mlir::gnnk::rowMapping(KernelBuilder &kb, Value count,
                                               int64_t lanes) {
  OpBuilder &b = kb.b;
  auto map = ForRowsOp::create(b, kb.loc, count, lanes);
  Block *body = new Block();
  map.getBody().push_back(body);
  Value row = body->addArgument(b.getIndexType(), kb.loc);
  Value lane = body->addArgument(b.getIndexType(), kb.loc);
  b.setInsertionPointToStart(body);
  return {row, lane};
}

void mlir::gnnk::finishRowKernel(KernelBuilder &kb, KernelGroupOp group,
                                 GroupParts &parts, gnn::ScheduleAttr s) {
  YieldOp::create(kb.b, kb.loc);
  if (s.getSplit())
    kb.kernel->setAttr(kSplitAttr, kb.b.getI64IntegerAttr(s.getSplit()));
  AffineExpr nodes = getAffineSymbolExpr(0, group.getContext());
  // Every result (an attention's log-sum-exp too) has a row per node.
  SmallVector<AffineExpr> rows(group.getNumResults(), nodes);
  group->replaceAllUsesWith(
      kb.finish((nodes * s.getLanes()).ceilDiv(s.getBlock()), rows,
                parts.graph)
          ->getResults());
}

//===----------------------------------------------------------------------===//
// Edge softmax
//===----------------------------------------------------------------------===//

LogicalResult mlir::gnnk::lowerEdgeSoftmax(KernelGroupOp group,
                                           GroupParts &parts, int indexBits) {
  if (!parts.producers.empty())
    return group.emitOpError("expects an edge softmax group to start with "
                             "the softmax");
  auto op = cast<gnn::EdgeSoftmaxOp>(parts.anchor);
  FailureOr<int64_t> heads = rowElements(op.getInput(), op);
  if (failed(heads))
    return failure();
  gnn::ScheduleAttr s = group.getScheduleAttr();
  int64_t lanes = s.getLanes();
  bool reversed = op.getReversed();
  KernelBuilder kb(group, group.getKernel(), s.getBlock(), indexBits);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  MLIRContext *ctx = group.getContext();
  AffineExpr nodes = getAffineSymbolExpr(0, ctx);
  auto [row, lane] = rowMapping(kb, kb.size("nodes"), lanes);
  RowTraversal t = traverse(kb, reversed, row);
  Value first = kb.add(t.begin, lane);
  Value step = kb.idx(lanes);
  EdgeEvaluator eval(kb, group);
  Type ft = kb.ft, f64 = b.getF64Type();
  auto headLoop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(*heads),
                                     kb.idx(1));
  b.setInsertionPointToStart(headLoop.getBody());
  Value h = headLoop.getInductionVar();
  LogicalResult status = success();
  float inf = std::numeric_limits<float>::infinity();
  // Pass 1: the row's maximum, NaN if a value is (arith.maximumf), so that
  // the passes below give the whole row NaN weights for a NaN value, a +inf
  // (inf - inf) or a row of -inf only (-inf - -inf), as torch's softmax;
  // a row without edges keeps m = -inf, sum = 0, lse = -inf.
  ForEdgesOp maxLoop = edgeLoop(
      kb, t, first, step, {kb.fp(-inf)}, reversed, row,
      [&](const EdgeRef &e, ValueRange acc) -> FailureOr<SmallVector<Value>> {
        FailureOr<Value> x = eval.element(op.getInput(), e, h);
        if (failed(x))
          return failure();
        return SmallVector<Value>{
            arith::MaximumFOp::create(b, loc, acc[0], *x).getResult()};
      },
      status);
  if (failed(status))
    return failure();
  auto maxRule = [&](OpBuilder &rb, ValueRange a, ValueRange c) {
    return SmallVector<Value>{
        arith::MaximumFOp::create(rb, loc, a[0], c[0]).getResult()};
  };
  auto sumRule = [&](OpBuilder &rb, ValueRange a, ValueRange c) {
    return SmallVector<Value>{
        arith::AddFOp::create(rb, loc, a[0], c[0]).getResult()};
  };
  kb.buildCombine(maxLoop.getMerge(), {ft}, maxRule);
  Value m = maxLoop.getResult(0);
  if (lanes > 1) {
    auto red = TeamReduceOp::create(b, loc, ValueRange{m}, lanes > 1 ? 1 : 1,
                                    lanes);
    kb.buildCombine(red.getCombine(), {ft}, maxRule);
    m = red.getResult(0);
  }
  // Pass 2: the normaliser, in double.
  ForEdgesOp sumLoop = edgeLoop(
      kb, t, first, step, {kb.f64(0.0)}, reversed, row,
      [&](const EdgeRef &e, ValueRange acc) -> FailureOr<SmallVector<Value>> {
        FailureOr<Value> x = eval.element(op.getInput(), e, h);
        if (failed(x))
          return failure();
        Value p = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, *x, m));
        Value pd = kb.castFloat(p, f64);
        return SmallVector<Value>{
            arith::AddFOp::create(b, loc, acc[0], pd).getResult()};
      },
      status);
  if (failed(status))
    return failure();
  kb.buildCombine(sumLoop.getMerge(), {f64}, sumRule);
  Value sum = sumLoop.getResult(0);
  if (lanes > 1) {
    auto red = TeamReduceOp::create(b, loc, ValueRange{sum}, 1, lanes);
    kb.buildCombine(red.getCombine(), {f64}, sumRule);
    sum = red.getResult(0);
  }
  Value inv = kb.castFloat(arith::DivFOp::create(b, loc, kb.f64(1.0), sum), ft);
  if (parts.lse) {
    // m + log(sum) by the team's first lane; -inf for a row without edges.
    // (The verifier gives the log-sum-exp the input's trailing shape.)
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        kb.idx(0));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, first, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value logSum = kb.castFloat(math::LogOp::create(b, loc, sum), ft);
    Value lse = arith::AddFOp::create(b, loc, m, logSum);
    kb.store({lse}, kb.result(1), kb.add(kb.mul(row, *heads), h));
  }
  // Pass 3: the weights.
  edgeLoop(
      kb, t, first, step, {}, reversed, row,
      [&](const EdgeRef &e, ValueRange) -> FailureOr<SmallVector<Value>> {
        FailureOr<Value> x = eval.element(op.getInput(), e, h);
        if (failed(x))
          return failure();
        Value p = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, *x, m));
        p = arith::MulFOp::create(b, loc, p, inv);
        FailureOr<Value> out = kb.applyConsumers(parts.consumers,
                                                 op.getResult(), p, e.slot, h);
        if (failed(out))
          return failure();
        kb.store(*out, kb.result(0), kb.add(kb.mul(e.slot, *heads), h));
        return SmallVector<Value>{};
      },
      status);
  if (failed(status))
    return failure();
  b.setInsertionPointAfter(headLoop);
  YieldOp::create(b, loc);
  AffineExpr edges = getAffineSymbolExpr(1, ctx);
  SmallVector<AffineExpr> rows = {edges};
  if (parts.lse)
    rows.push_back(nodes);
  group->replaceAllUsesWith(
      kb.finish((nodes * lanes).ceilDiv(s.getBlock()), rows, parts.graph)
          ->getResults());
  return success();
}

//===----------------------------------------------------------------------===//
// Aggregations
//===----------------------------------------------------------------------===//

namespace {
/// The edge values of an aggregation group that sum over the innermost
/// dimension of the aggregated row, one per head (its outer indices): an
/// `sddmm dot` of node rows shaped like the aggregated ones, or a generic
/// summing (`o + t(...)` from a constant fill) over one loop of the innermost
/// extent (GATv2's score `sum_d att[h, d] * leaky(e[edge, h, d])`). A lane
/// covering `vec` features of a head needs them at its head only, and the
/// lanes of a head are an aligned segment of `lanesPerHead` feature lanes:
/// each sums the terms of its own features and a `gnnk.team_reduce` adds the
/// segment's partial sums, as the fused attention computes its scores,
/// instead of every lane evaluating the head's whole reduction.
struct HeadReductions {
  SmallVector<Operation *> ops;
  int64_t lanesPerHead = 1;

  /// The shared reductions of `parts` for rows of `rowType` covered `vec`
  /// features at a time by `featureLanes` lanes (none when a head's lanes
  /// are not a power of two within them).
  static HeadReductions of(const GroupParts &parts, EdgeEvaluator &eval,
                           RankedTensorType rowType, int64_t vec,
                           int64_t featureLanes);
  /// Computes them at edge `e` for the lane's run of elements at row indices
  /// `at` (sharing their outer indices) and hands them to `eval`.
  LogicalResult share(KernelBuilder &kb, EdgeEvaluator &eval, const EdgeRef &e,
                      ArrayRef<SmallVector<Value>> at,
                      RankedTensorType rowType) const;
};
} // namespace

HeadReductions HeadReductions::of(const GroupParts &parts, EdgeEvaluator &eval,
                                  RankedTensorType rowType, int64_t vec,
                                  int64_t featureLanes) {
  HeadReductions r;
  if (rowType.getRank() < 2)
    return r;
  int64_t inner = rowType.getShape().back();
  if (inner % vec || !llvm::isPowerOf2_64(inner / vec) ||
      inner / vec > featureLanes)
    return r;
  r.lanesPerHead = inner / vec;
  ArrayRef<int64_t> row = rowType.getShape().drop_front();
  for (Operation *op : parts.producers) {
    if (op->getNumResults() != 1 || !eval.inGroup(op->getResult(0)))
      continue;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || type.getShape().drop_front() != row.drop_back())
      continue;
    if (auto sddmm = dyn_cast<gnn::SddmmOp>(op)) {
      if (sddmm.getKind() == gnn::SddmmKind::dot &&
          sddmm.getLhs().getType().getShape().drop_front() == row &&
          sddmm.getRhs().getType().getShape().drop_front() == row)
        r.ops.push_back(op);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || generic.getNumDpsInits() != 1 ||
        gnn::inferDomain(generic->getResult(0)) != gnn::Domain::Edge)
      continue;
    unsigned rank = type.getRank();
    SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
    OpOperand *init = generic.getDpsInitOperand(0);
    AffineMap written = generic.getMatchingIndexingMap(init);
    if (iters.size() != rank + 1 ||
        llvm::count(iters, utils::IteratorType::parallel) != rank ||
        iters.back() != utils::IteratorType::reduction ||
        generic.getStaticLoopRanges().back() != inner ||
        written !=
            AffineMap::getMultiDimIdentityMap(rank + 1, generic.getContext())
                .getMajorSubMap(rank) ||
        !isSumReduction(generic) || !KernelBuilder::fillConstant(init->get()))
      continue;
    r.ops.push_back(op);
  }
  return r;
}

LogicalResult HeadReductions::share(KernelBuilder &kb, EdgeEvaluator &eval,
                                    const EdgeRef &e,
                                    ArrayRef<SmallVector<Value>> at,
                                    RankedTensorType rowType) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  ArrayRef<Value> head = ArrayRef(at.front()).drop_back();
  for (Operation *op : ops) {
    Type type = getElementTypeOrSelf(op->getResult(0).getType());
    Value partial = kb.fp(type, 0.0);
    double init = 0.0;
    if (auto sddmm = dyn_cast<gnn::SddmmOp>(op)) {
      FailureOr<int64_t> row = rowElements(sddmm.getLhs(), sddmm);
      if (failed(row))
        return failure();
      // The run is contiguous and aligned to its length (vec divides the
      // innermost dimension): one vector load per operand.
      Value k = flatIndex(kb, rowType, at.front());
      Value a = sddmm.getReversed() ? e.dst : e.src;
      Value c = sddmm.getReversed() ? e.src : e.dst;
      SmallVector<Value> x = kb.load(kb.operand(sddmm.getLhs()),
                                     kb.add(kb.mul(a, *row), k), at.size());
      SmallVector<Value> y = kb.load(kb.operand(sddmm.getRhs()),
                                     kb.add(kb.mul(c, *row), k), at.size());
      for (auto [xv, yv] : llvm::zip(x, y))
        partial = math::FmaOp::create(b, loc, xv, yv, partial);
    } else {
      auto generic = cast<linalg::GenericOp>(op);
      init = *KernelBuilder::fillConstant(generic.getDpsInitOperand(0)->get());
      for (const SmallVector<Value> &element : at) {
        SmallVector<Value> loops = {e.slot};
        llvm::append_range(loops, head);
        loops.push_back(element.back());
        FailureOr<Value> next = eval.bodyAt(generic, e, loops, partial);
        if (failed(next))
          return failure();
        partial = *next;
      }
    }
    if (lanesPerHead > 1) {
      auto red =
          TeamReduceOp::create(b, loc, ValueRange{partial}, 1, lanesPerHead);
      kb.buildCombine(red.getCombine(), {type},
                      [&](OpBuilder &rb, ValueRange x, ValueRange y) {
                        return SmallVector<Value>{
                            arith::AddFOp::create(rb, loc, x[0], y[0])};
                      });
      partial = red.getResult(0);
    }
    if (init != 0.0)
      partial = arith::AddFOp::create(b, loc, kb.fp(type, init), partial);
    eval.remember(op->getResult(0), e, head, partial);
  }
  return success();
}

LogicalResult mlir::gnnk::lowerAggregation(KernelGroupOp group,
                                           GroupParts &parts, int indexBits) {
  Operation *op = parts.anchor;
  auto spmm = dyn_cast<gnn::SpmmOp>(op);
  auto reduce = dyn_cast<gnn::ReduceOp>(op);
  Value input = spmm ? spmm.getInput() : reduce.getInput();
  Value weights = spmm ? spmm.getWeights() : Value();
  bool reversed = spmm ? spmm.getReversed() : reduce.getReversed();
  gnn::ReduceKind kind = spmm ? spmm.getReduce() : reduce.getKind();
  FailureOr<int64_t> rowOr = rowElements(op->getResult(0), op);
  if (failed(rowOr))
    return failure();
  int64_t row = *rowOr;
  gnn::ScheduleAttr s = group.getScheduleAttr();
  int64_t lanes = s.getLanes(), vec = s.getVector();
  if (row % vec)
    return op->emitOpError() << "has rows of " << row
                             << " elements, not a multiple of the schedule's "
                                "vector width "
                             << vec;
  if (spmm && !weights && llvm::any_of(parts.producers, [](Operation *p) {
        return isa<gnn::GatherOp, gnn::SddmmOp>(p);
      }))
    return op->emitOpError("expects fused producers of an spmm to compute its "
                           "weights");
  LanePartition part = partitionRow(row, lanes, vec);
  int64_t fl = part.featureLanes, groups = part.groups, chunk = part.chunk,
          chunks = part.chunks;
  constexpr int64_t kMaxAccumulators = 64;
  if (chunks * vec > kMaxAccumulators)
    return op->emitOpError() << "has rows of " << row
                             << " elements; the CUDA backend keeps at most "
                             << kMaxAccumulators * lanes
                             << " accumulators per row team";
  KernelBuilder kb(group, group.getKernel(), s.getBlock(), indexBits);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type ft = kb.ft;
  // Sums accumulate in the function's float type, like cuSPARSE's: double
  // accumulators cost a conversion per term (16 per cycle and SM on the
  // H100) and twice the registers. Split rows keep each team's sum short.
  Type accType = ft;
  float inf = std::numeric_limits<float>::infinity();
  double identity = kind == gnn::ReduceKind::max   ? -inf
                    : kind == gnn::ReduceKind::min ? inf
                                                   : 0.0;
  // Max and min propagate NaN, as torch's amax and amin (not fmax).
  auto rule = [&](OpBuilder &rb, Value a, Value c) -> Value {
    if (kind == gnn::ReduceKind::max)
      return arith::MaximumFOp::create(rb, loc, a, c);
    if (kind == gnn::ReduceKind::min)
      return arith::MinimumFOp::create(rb, loc, a, c);
    return arith::AddFOp::create(rb, loc, a, c);
  };
  // With winner codes (spmm and reduce max/min's second result; see
  // gnn.spmm), the state is the extrema then as many codes, floats of the
  // function's type. Without weights a code names the winning neighbour:
  // a term beyond the extremum takes its neighbour's id (-2 from 2^p on, no
  // longer exact), a term equal to it keeps the code when it comes from the
  // same neighbour (a duplicate edge) and makes it -2 otherwise. With
  // weights, and for reduce, a code counts the edges attaining the extremum
  // (-(c + 1)): a term beyond it restarts the count, a term equal to it
  // adds one.
  bool trackWinner = static_cast<bool>(parts.winner);
  bool byNeighbour = spmm && !weights;
  int64_t values = chunks * vec;
  // (Constants through `rb`: merge regions are built with their own
  // builder.)
  auto cst = [&](OpBuilder &rb, double v) {
    return arith::ConstantOp::create(rb, loc, rb.getFloatAttr(accType, v))
        .getResult();
  };
  auto eq = [&](OpBuilder &rb, Value a, Value c) {
    return arith::CmpFOp::create(rb, loc, arith::CmpFPredicate::OEQ, a, c)
        .getResult();
  };
  auto merge = [&](OpBuilder &rb, ValueRange a, ValueRange c) {
    SmallVector<Value> out;
    for (int64_t i = 0; i < values; ++i)
      out.push_back(rule(rb, a[i], c[i]));
    // (Operands built one statement at a time: the order of a call's
    // arguments, and so of the emitted code, is the compiler's choice.)
    if (trackWinner)
      for (int64_t i = 0; i < values; ++i) {
        // A side keeps its code where its extremum is the merged one (-1,
        // no edge, elsewhere).
        Value none = cst(rb, -1.0);
        Value sameA = eq(rb, a[i], out[i]);
        Value fromA = arith::SelectOp::create(rb, loc, sameA, a[values + i],
                                              none);
        Value sameC = eq(rb, c[i], out[i]);
        Value fromC = arith::SelectOp::create(rb, loc, sameC, c[values + i],
                                              none);
        if (!byNeighbour) {
          // -(ca + 1) - (cc + 1) edges: fromA + fromC + 1.
          Value sum = arith::AddFOp::create(rb, loc, fromA, fromC);
          out.push_back(arith::SubFOp::create(rb, loc, sum, none));
          continue;
        }
        // One side's code when the other has none or the same neighbour,
        // else several neighbours (-2).
        Value agree = eq(rb, fromA, fromC);
        Value both = arith::SelectOp::create(rb, loc, agree, fromA,
                                             cst(rb, -2.0));
        Value onlyA = eq(rb, fromC, none);
        Value either = arith::SelectOp::create(rb, loc, onlyA, fromA, both);
        Value onlyC = eq(rb, fromA, none);
        out.push_back(arith::SelectOp::create(rb, loc, onlyC, fromC, either));
      }
    return out;
  };
  // Neighbour ids from 2^p on have no exact code (-2).
  int64_t idLimit = int64_t(1) << (ft.isF64() ? 53 : 24);
  arith::CmpFPredicate beyond = kind == gnn::ReduceKind::max
                                    ? arith::CmpFPredicate::OGT
                                    : arith::CmpFPredicate::OLT;

  auto [rowIdx, lane] = rowMapping(kb, kb.size("nodes"), lanes);
  Value g = kb.div(lane, fl), f = kb.rem(lane, fl);
  RowTraversal t = traverse(kb, reversed, rowIdx);
  EdgeEvaluator eval(kb, group);
  auto rowType = cast<RankedTensorType>(input.getType());
  HeadReductions heads = HeadReductions::of(parts, eval, rowType, vec, fl);
  // Node values computed in the group (e.g. GCN's degree normalisation) are
  // evaluated where they are read: per neighbour and in the epilogue.
  NodeEvaluator nodeEval(kb, group);
  evaluateNodesInGroupFor(kb, nodeEval);
  if (Operation *def = input.getDefiningOp())
    if (spmm && group->isAncestor(def) && !nodeEval.computes(input))
      return op->emitOpError("reads features computed inside its kernel "
                             "group by an op that cannot be evaluated per "
                             "node (only degrees and elementwise ops)");
  // Feature offset of chunk j for this lane and whether it is in the row.
  auto chunkOffset = [&](int64_t j) {
    return kb.add(kb.idx(j * chunk), kb.mul(f, vec));
  };
  auto chunkActive = [&](int64_t j, Value c) -> Value {
    if ((j + 1) * chunk <= row)
      return Value();
    return kb.lt(c, kb.idx(row));
  };
  SmallVector<Value> inits;
  for (int64_t i = 0; i < values; ++i)
    inits.push_back(kb.fp(identity));
  if (trackWinner)
    for (int64_t i = 0; i < values; ++i)
      inits.push_back(kb.fp(accType, -1.0));
  LogicalResult status = success();
  ForEdgesOp loop = edgeLoop(
      kb, t, kb.add(t.begin, g), kb.idx(groups), inits, reversed, rowIdx,
      [&](const EdgeRef &e, ValueRange acc) -> FailureOr<SmallVector<Value>> {
        SmallVector<Value> next, edgeTerms, actives;
        for (int64_t j = 0; j < chunks; ++j) {
          Value c = chunkOffset(j);
          Value active = chunkActive(j, c);
          actives.push_back(active);
          Value safe = active ? arith::SelectOp::create(b, loc, active, c,
                                                        kb.idx(0))
                                    .getResult()
                              : c;
          SmallVector<Value> terms;
          SmallVector<SmallVector<Value>> at =
              runIndices(kb, rowType, safe, vec);
          if (failed(heads.share(kb, eval, e, at, rowType)))
            return failure();
          if (spmm) {
            Value node = reversed ? e.dst : e.src;
            if (nodeEval.computes(input)) {
              for (int64_t v = 0; v < vec; ++v) {
                FailureOr<Value> x =
                    nodeEval.element(input, node, kb.add(safe, kb.idx(v)));
                if (failed(x))
                  return failure();
                terms.push_back(*x);
              }
            } else {
              terms = kb.load(kb.operand(input),
                              kb.add(kb.mul(node, row), safe), vec);
            }
            // The weights broadcast over the innermost dimension: one
            // weight for the run's elements when they share a head.
            if (weights) {
              for (int64_t v = 0; v < vec; ++v) {
                FailureOr<Value> w =
                    eval.elementAt(weights, e, ArrayRef(at[v]).drop_back());
                if (failed(w))
                  return failure();
                terms[v] = arith::MulFOp::create(b, loc, *w, terms[v]);
              }
            }
          } else {
            if (failed(eval.prefetchRun(input, e, at)))
              return failure();
            for (int64_t v = 0; v < vec; ++v) {
              FailureOr<Value> x = eval.elementAt(input, e, at[v]);
              if (failed(x))
                return failure();
              terms.push_back(*x);
            }
          }
          for (int64_t v = 0; v < vec; ++v) {
            Value a = acc[j * vec + v];
            Value term = kb.castFloat(terms[v], accType);
            Value n = rule(b, a, term);
            if (active)
              n = arith::SelectOp::create(b, loc, active, n, a);
            next.push_back(n);
            edgeTerms.push_back(term);
          }
        }
        if (trackWinner) {
          // The edge's code without weights: its neighbour's id.
          Value here;
          if (byNeighbour) {
            Value nbr = reversed ? e.dst : e.src;
            Value exact = kb.lt(nbr, kb.idx(idLimit));
            Value id = arith::SIToFPOp::create(
                b, loc, accType,
                arith::IndexCastOp::create(b, loc, b.getI64Type(), nbr));
            here = arith::SelectOp::create(b, loc, exact, id,
                                           kb.fp(accType, -2.0));
          }
          for (int64_t j = 0; j < chunks; ++j)
            for (int64_t v = 0; v < vec; ++v) {
              int64_t i = j * vec + v;
              Value code = acc[values + i];
              Value term = edgeTerms[i];
              Value wins = arith::CmpFOp::create(b, loc, beyond, term, acc[i]);
              Value ties = eq(b, term, acc[i]);
              Value n;
              if (byNeighbour) {
                // code' = beyond ? here : equal ? (code == here ? code : -2)
                //       : code.
                Value same = eq(b, code, here);
                Value tie = arith::SelectOp::create(b, loc, same, code,
                                                    kb.fp(accType, -2.0));
                Value kept = arith::SelectOp::create(b, loc, ties, tie, code);
                n = arith::SelectOp::create(b, loc, wins, here, kept);
              } else {
                // code' = beyond ? -2 : equal ? code - 1 : code.
                Value more = arith::SubFOp::create(b, loc, code,
                                                   kb.fp(accType, 1.0));
                Value kept = arith::SelectOp::create(b, loc, ties, more, code);
                n = arith::SelectOp::create(b, loc, wins, kb.fp(accType, -2.0),
                                            kept);
              }
              if (Value active = actives[j])
                n = arith::SelectOp::create(b, loc, active, n, code);
              next.push_back(n);
            }
        }
        return next;
      },
      status);
  if (failed(status))
    return failure();
  loop.setUnrollAttr(b.getI64IntegerAttr(4));
  SmallVector<Type> types(inits.size(), accType);
  kb.buildCombine(loop.getMerge(), types, merge);
  SmallVector<Value> acc(loop.getResults());
  if (groups > 1) {
    auto red = TeamReduceOp::create(b, loc, acc, fl, lanes);
    kb.buildCombine(red.getCombine(), types, merge);
    acc.assign(red.getResults().begin(), red.getResults().end());
  }
  Value count = kb.sub(t.end, t.begin);
  Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count,
                                      kb.idx(0));
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, g,
                                       kb.idx(0));
  for (int64_t j = 0; j < chunks; ++j) {
    Value c = chunkOffset(j);
    Value cond = leader;
    if (Value active = chunkActive(j, c))
      cond = arith::AndIOp::create(b, loc, cond, active);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> outs;
    for (int64_t v = 0; v < vec; ++v) {
      Value a = acc[j * vec + v];
      if (kind == gnn::ReduceKind::mean) {
        Value n = arith::SIToFPOp::create(
            b, loc, accType,
            arith::IndexCastOp::create(b, loc, b.getI64Type(), count));
        a = arith::DivFOp::create(b, loc, a, n);
      }
      a = kb.castFloat(a, ft);
      a = arith::SelectOp::create(b, loc, empty, kb.fp(0.0), a);
      FailureOr<Value> out = kb.applyConsumers(
          parts.consumers, op->getResult(0), a, rowIdx, kb.add(c, kb.idx(v)));
      if (failed(out))
        return failure();
      outs.push_back(*out);
    }
    kb.store(outs, kb.result(0), kb.add(kb.mul(rowIdx, row), c));
    if (trackWinner) {
      // A NaN extremum's code is NaN (the extremum itself), whatever the
      // walk counted before or after the NaN.
      SmallVector<Value> codes;
      for (int64_t v = 0; v < vec; ++v) {
        Value a = acc[j * vec + v];
        Value isNaN =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a, a);
        Value code = arith::SelectOp::create(b, loc, isNaN, a,
                                             acc[values + j * vec + v]);
        codes.push_back(kb.castFloat(code, ft));
      }
      kb.store(codes, kb.result(1), kb.add(kb.mul(rowIdx, row), c));
    }
  }
  finishRowKernel(kb, group, parts, s);
  return success();
}

void mlir::gnnk::populateAggregationLoweringPatterns(
    RewritePatternSet &patterns, int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::aggregation,
      gnn::Mapping::row_parallel, lowerAggregation, indexBits);
}

void mlir::gnnk::populateEdgeSoftmaxLoweringPatterns(
    RewritePatternSet &patterns, int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::edge_softmax,
      gnn::Mapping::row_parallel, lowerEdgeSoftmax, indexBits);
}
