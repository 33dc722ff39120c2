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
                                 step, t.nbrs, t.perm, inits, IntegerAttr(),
                                 IntegerAttr());
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

SmallVector<SmallVector<Value>> mlir::gnnk::runIndices(KernelBuilder &kb,
                                                       RankedTensorType type,
                                                       Value first, int64_t n) {
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
                                 GroupParts &parts, gnn::ScheduleAttr s,
                                 RowSpace rowSpace) {
  YieldOp::create(kb.b, kb.loc);
  // The heavy-row split orders the rows by degree over the whole node set
  // and keeps partial states in the lightest rows of the result: a
  // bipartite graph's sides (rows of another count) are not split.
  if (s.getSplit() && rowSpace.symbol == 0)
    kb.kernel->setAttr(kSplitAttr, kb.b.getI64IntegerAttr(s.getSplit()));
  AffineExpr nodes = rowSpace.expr(group.getContext());
  // Every result (an attention's log-sum-exp too) has a row per row.
  SmallVector<AffineExpr> rows(group.getNumResults(), nodes);
  group->replaceAllUsesWith(
      kb.finish((nodes * s.getLanes()).ceilDiv(s.getBlock()), rows,
                parts.graph)
          ->getResults());
}

//===----------------------------------------------------------------------===//
// Edge softmax
//===----------------------------------------------------------------------===//

/// The team's result of `loop` (an edge loop over a row split among the
/// team's `lanes` lanes, carrying one value of `type`): `rule` merges the
/// loop's values and, across the lanes, a `gnnk.team_reduce`'s.
static Value
teamResult(KernelBuilder &kb, ForEdgesOp loop, Type type, int64_t lanes,
           function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)>
               rule) {
  kb.buildCombine(loop.getMerge(), {type}, rule);
  Value v = loop.getResult(0);
  if (lanes > 1) {
    auto red = TeamReduceOp::create(kb.b, kb.loc, ValueRange{v}, 1, lanes);
    kb.buildCombine(red.getCombine(), {type}, rule);
    v = red.getResult(0);
  }
  return v;
}

/// Stores the log-sum-exp `m + log(sum)` of head `h` of `row` (of `heads`)
/// by the team's first lane; -inf for a row without edges. (The verifier
/// gives the log-sum-exp the input's trailing shape.)
static void storeLogSumExp(KernelBuilder &kb, Value row, Value lane, Value h,
                           int64_t heads, Value m, Value sum) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, kb.idx(0));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, first, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value logSum = kb.castFloat(math::LogOp::create(b, loc, sum), kb.ft);
  Value lse = arith::AddFOp::create(b, loc, m, logSum);
  kb.store({lse}, kb.result(1), kb.add(kb.mul(row, heads), h));
}

/// A team per row (node), a loop over the heads and, per head, three walks
/// of the row's edges split among the team's lanes: the maximum, the
/// normaliser, the weights.
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
  RowSpace rowSpace = traversalRows(op.getGraph(), reversed);
  AffineExpr nodes = rowSpace.expr(ctx);
  auto [row, lane] = rowMapping(kb, kb.size(rowSpace.name), lanes);
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
  Value m = teamResult(kb, maxLoop, ft, lanes, maxRule);
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
  Value sum = teamResult(kb, sumLoop, f64, lanes, sumRule);
  Value inv = kb.castFloat(arith::DivFOp::create(b, loc, kb.f64(1.0), sum), ft);
  if (parts.lse)
    storeLogSumExp(kb, row, lane, h, *heads, m, sum);
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
    Type type = mlir::gnn::arithmeticType(
        getElementTypeOrSelf(op->getResult(0).getType()));
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

namespace {
/// What the kernel of an aggregation follows, read off its anchor (an spmm
/// or a reduce) and its schedule and checked before any IR is built.
struct AggregationPlan {
  Operation *op = nullptr;
  /// The anchor as an spmm (null for a reduce).
  gnn::SpmmOp spmm;
  Value input, weights;
  bool reversed = false;
  gnn::ReduceKind kind = gnn::ReduceKind::sum;
  gnn::ScheduleAttr schedule;
  /// Elements per row, the team's lanes and the features a lane reads at a
  /// time.
  int64_t row = 0, lanes = 0, vec = 0;
  LanePartition part;
  /// Accumulators per lane for the extrema or sums (chunks * vec).
  int64_t values = 0;
  /// What the accumulators start from: the reduction's identity.
  double identity = 0.0;
  /// With winner codes (spmm and reduce max/min's second result; see
  /// gnn.spmm), the state is the extrema then as many codes, floats of the
  /// function's arithmetic type. A code counts the edges attaining the
  /// extremum, -(c + 1); without weights nor `counted` (`byNeighbour`) a
  /// single such edge is named instead by its neighbour's id (-2, a count
  /// of one, from 2^p on, where the id is no longer exact). A term beyond
  /// the extremum restarts the count (or takes the id), a term equal to it
  /// adds one (an id becomes -3, two edges: a duplicate edge counts as a
  /// tie).
  bool trackWinner = false, byNeighbour = false;

  /// The plan of `parts`' anchor, or a diagnostic on it when its rows do not
  /// fit the schedule or the CUDA backend.
  static FailureOr<AggregationPlan> of(KernelGroupOp group, GroupParts &parts);
};

/// Builds the row kernel of an aggregation group from its plan: a team of
/// lanes per row, each lane carrying its accumulators (and winner codes)
/// over its chunks of the row's features through `gnnk.for_edges` over the
/// row's edges, a `gnnk.team_reduce` merging the team's edge groups, and the
/// lanes of edge group 0 finishing (mean, empty rows, consumers) and storing
/// the row. One method per phase; the fused producers are evaluated per
/// edge (`eval`), the node values computed in the group per node
/// (`nodeEval`).
class AggregationKernel {
public:
  AggregationKernel(KernelGroupOp group, GroupParts &parts,
                    const AggregationPlan &plan, int indexBits);

  /// Builds the kernel and replaces the group by its launch.
  LogicalResult build();

private:
  /// The reduction's rule on two accumulators. Max and min propagate NaN,
  /// as torch's amax and amin (not fmax).
  Value rule(OpBuilder &rb, Value a, Value c);
  /// An accumulator-typed constant (through `rb`: merge regions are built
  /// with their own builder).
  Value cst(OpBuilder &rb, double v);
  /// Whether accumulators `a` and `c` are equal (ordered).
  Value eq(OpBuilder &rb, Value a, Value c);
  /// The merge of two lanes' states `a` and `c` (the edge loop's merge and
  /// the team reduction's combine).
  SmallVector<Value> merge(OpBuilder &rb, ValueRange a, ValueRange c);
  /// Feature offset of chunk `j` for this lane.
  Value chunkOffset(int64_t j);
  /// Whether offset `c` of chunk `j` is in the row (null when every lane's
  /// chunk `j` is).
  Value chunkActive(int64_t j, Value c);
  /// `a + term` of a sum whose term is masked, `select(c, v, 0)` (the
  /// pulled extremum gradient's `x == y ? g : 0`, a ReLU's mask), as
  /// `select(c, a + v, a)`: nvcc then predicates the addition instead of
  /// selecting the term and adding it (the pulled bf16 max gradient's edge
  /// loop: 222 -> 190 SASS instructions per 4 edges). The same value: a
  /// sum that starts at +0 never holds -0, so `a + 0` is `a`. Null where
  /// the reduction is not a sum or the term is not so masked.
  Value maskedSum(Value a, Value term);
  /// The edge loop's body: the state `acc` after edge `e`.
  FailureOr<SmallVector<Value>> accumulate(const EdgeRef &e, ValueRange acc);
  /// The `vec` terms of edge `e` for the run of features from offset
  /// `safe` (at row indices `at`): the neighbour's features (times the
  /// edge's weight), or the reduced edge values.
  FailureOr<SmallVector<Value>> chunkTerms(const EdgeRef &e, Value safe,
                                           ArrayRef<SmallVector<Value>> at);
  /// Appends to `next` the winner codes after edge `e`, whose terms are
  /// `edgeTerms` (chunk j's active where `actives[j]`).
  void updateCodes(const EdgeRef &e, ValueRange acc, ArrayRef<Value> edgeTerms,
                   ArrayRef<Value> actives, SmallVectorImpl<Value> &next);
  /// The epilogue of chunk `j` of the reduced state `acc`, by the lanes of
  /// edge group 0 (`leader`): the mean over the row's `count` edges, 0 for
  /// an empty row, the consumers, the stores (and the codes').
  LogicalResult storeChunk(int64_t j, ValueRange acc, Value count, Value empty,
                           Value leader);

  KernelGroupOp group;
  GroupParts &parts;
  const AggregationPlan &plan;
  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  /// Sums accumulate in the function's float type, like cuSPARSE's: double
  /// accumulators cost a conversion per term (16 per cycle and SM on the
  /// H100) and twice the registers. Split rows keep each team's sum short.
  Type accType;
  EdgeEvaluator eval;
  NodeEvaluator nodeEval;
  RankedTensorType rowType;
  HeadReductions heads;
  /// The row, the lane's edge group and its feature lane.
  Value rowIdx, edgeGroup, featureLane;
  RowTraversal t;
};
} // namespace

FailureOr<AggregationPlan> AggregationPlan::of(KernelGroupOp group,
                                               GroupParts &parts) {
  AggregationPlan p;
  p.op = parts.anchor;
  p.spmm = dyn_cast<gnn::SpmmOp>(p.op);
  auto reduce = dyn_cast<gnn::ReduceOp>(p.op);
  p.input = p.spmm ? p.spmm.getInput() : reduce.getInput();
  p.weights = p.spmm ? p.spmm.getWeights() : Value();
  p.reversed = p.spmm ? p.spmm.getReversed() : reduce.getReversed();
  p.kind = p.spmm ? p.spmm.getReduce() : reduce.getKind();
  FailureOr<int64_t> rowOr = rowElements(p.op->getResult(0), p.op);
  if (failed(rowOr))
    return failure();
  p.row = *rowOr;
  p.schedule = group.getScheduleAttr();
  p.lanes = p.schedule.getLanes();
  p.vec = p.schedule.getVector();
  if (p.row % p.vec)
    return p.op->emitOpError() << "has rows of " << p.row
                               << " elements, not a multiple of the "
                                  "schedule's vector width "
                               << p.vec;
  if (p.spmm && !p.weights && llvm::any_of(parts.producers, [](Operation *o) {
        return isa<gnn::GatherOp, gnn::SddmmOp>(o);
      }))
    return p.op->emitOpError("expects fused producers of an spmm to compute "
                             "its weights");
  p.part = partitionRow(p.row, p.lanes, p.vec);
  p.values = p.part.chunks * p.vec;
  constexpr int64_t kMaxAccumulators = 64;
  if (p.values > kMaxAccumulators)
    return p.op->emitOpError()
           << "has rows of " << p.row
           << " elements; the CUDA backend keeps at most "
           << kMaxAccumulators * p.lanes << " accumulators per row team";
  float inf = std::numeric_limits<float>::infinity();
  p.identity = p.kind == gnn::ReduceKind::max   ? -inf
               : p.kind == gnn::ReduceKind::min ? inf
                                                : 0.0;
  p.trackWinner = static_cast<bool>(parts.winner);
  p.byNeighbour = p.spmm && !p.weights && !p.spmm.getCounted();
  return p;
}

AggregationKernel::AggregationKernel(KernelGroupOp group, GroupParts &parts,
                                     const AggregationPlan &plan, int indexBits)
    : group(group), parts(parts), plan(plan),
      kb(group, group.getKernel(), plan.schedule.getBlock(), indexBits),
      b(kb.b), loc(kb.loc), accType(kb.ft), eval(kb, group),
      nodeEval(kb, group),
      rowType(cast<RankedTensorType>(plan.input.getType())) {}

Value AggregationKernel::rule(OpBuilder &rb, Value a, Value c) {
  if (plan.kind == gnn::ReduceKind::max)
    return arith::MaximumFOp::create(rb, loc, a, c);
  if (plan.kind == gnn::ReduceKind::min)
    return arith::MinimumFOp::create(rb, loc, a, c);
  return arith::AddFOp::create(rb, loc, a, c);
}

Value AggregationKernel::cst(OpBuilder &rb, double v) {
  return arith::ConstantOp::create(rb, loc, rb.getFloatAttr(accType, v))
      .getResult();
}

Value AggregationKernel::eq(OpBuilder &rb, Value a, Value c) {
  return arith::CmpFOp::create(rb, loc, arith::CmpFPredicate::OEQ, a, c)
      .getResult();
}

SmallVector<Value> AggregationKernel::merge(OpBuilder &rb, ValueRange a,
                                            ValueRange c) {
  int64_t values = plan.values;
  SmallVector<Value> out;
  for (int64_t i = 0; i < values; ++i)
    out.push_back(rule(rb, a[i], c[i]));
  // (Operands built one statement at a time: the order of a call's
  // arguments, and so of the emitted code, is the compiler's choice.)
  if (plan.trackWinner)
    for (int64_t i = 0; i < values; ++i) {
      // A side keeps its code where its extremum is the merged one (-1,
      // no edge, elsewhere).
      Value none = cst(rb, -1.0);
      Value sameA = eq(rb, a[i], out[i]);
      Value fromA =
          arith::SelectOp::create(rb, loc, sameA, a[values + i], none);
      Value sameC = eq(rb, c[i], out[i]);
      Value fromC =
          arith::SelectOp::create(rb, loc, sameC, c[values + i], none);
      if (!plan.byNeighbour) {
        // -(ca + 1) - (cc + 1) edges: fromA + fromC + 1.
        Value sum = arith::AddFOp::create(rb, loc, fromA, fromC);
        out.push_back(arith::SubFOp::create(rb, loc, sum, none));
        continue;
      }
      // One side's code when the other has none, else the count of both
      // sides' edges (an id counts one): -(ca + cc + 1).
      Value zero = cst(rb, 0.0), one = cst(rb, 1.0);
      auto edgesOf = [&](Value code) -> Value {
        Value named = arith::CmpFOp::create(rb, loc, arith::CmpFPredicate::OGE,
                                            code, zero);
        Value counted = arith::SubFOp::create(rb, loc, none, code);
        return arith::SelectOp::create(rb, loc, named, one, counted);
      };
      Value ca = edgesOf(fromA);
      Value cc = edgesOf(fromC);
      Value both = arith::AddFOp::create(rb, loc, ca, cc);
      Value counted = arith::SubFOp::create(rb, loc, none, both);
      Value onlyA = eq(rb, fromC, none);
      Value either = arith::SelectOp::create(rb, loc, onlyA, fromA, counted);
      Value onlyC = eq(rb, fromA, none);
      out.push_back(arith::SelectOp::create(rb, loc, onlyC, fromC, either));
    }
  return out;
}

Value AggregationKernel::chunkOffset(int64_t j) {
  return kb.add(kb.idx(j * plan.part.chunk), kb.mul(featureLane, plan.vec));
}

Value AggregationKernel::chunkActive(int64_t j, Value c) {
  if ((j + 1) * plan.part.chunk <= plan.row)
    return Value();
  return kb.lt(c, kb.idx(plan.row));
}

LogicalResult AggregationKernel::build() {
  auto [row, lane] = rowMapping(
      kb, kb.size(traversalRows(parts.graph, plan.reversed).name), plan.lanes);
  rowIdx = row;
  edgeGroup = kb.div(lane, plan.part.featureLanes);
  featureLane = kb.rem(lane, plan.part.featureLanes);
  t = traverse(kb, plan.reversed, rowIdx);
  heads = HeadReductions::of(parts, eval, rowType, plan.vec,
                             plan.part.featureLanes);
  // Node values computed in the group (e.g. GCN's degree normalisation) are
  // evaluated where they are read: per neighbour and in the epilogue.
  evaluateNodesInGroupFor(kb, nodeEval);
  if (Operation *def = plan.input.getDefiningOp())
    if (plan.spmm && group->isAncestor(def) && !nodeEval.computes(plan.input))
      return plan.op->emitOpError("reads features computed inside its kernel "
                                  "group by an op that cannot be evaluated per "
                                  "node (only degrees and elementwise ops)");
  SmallVector<Value> inits;
  for (int64_t i = 0; i < plan.values; ++i)
    inits.push_back(kb.fp(plan.identity));
  if (plan.trackWinner)
    for (int64_t i = 0; i < plan.values; ++i)
      inits.push_back(kb.fp(accType, -1.0));
  LogicalResult status = success();
  ForEdgesOp loop = edgeLoop(
      kb, t, kb.add(t.begin, edgeGroup), kb.idx(plan.part.groups), inits,
      plan.reversed, rowIdx,
      [&](const EdgeRef &e, ValueRange acc) { return accumulate(e, acc); },
      status);
  if (failed(status))
    return failure();
  loop.setUnrollAttr(b.getI64IntegerAttr(4));
  SmallVector<Type> types(inits.size(), accType);
  auto mergeStates = [&](OpBuilder &rb, ValueRange a, ValueRange c) {
    return merge(rb, a, c);
  };
  kb.buildCombine(loop.getMerge(), types, mergeStates);
  SmallVector<Value> acc(loop.getResults());
  if (plan.part.groups > 1) {
    auto red =
        TeamReduceOp::create(b, loc, acc, plan.part.featureLanes, plan.lanes);
    kb.buildCombine(red.getCombine(), types, mergeStates);
    acc.assign(red.getResults().begin(), red.getResults().end());
  }
  Value count = kb.sub(t.end, t.begin);
  Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count,
                                      kb.idx(0));
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       edgeGroup, kb.idx(0));
  for (int64_t j = 0; j < plan.part.chunks; ++j)
    if (failed(storeChunk(j, acc, count, empty, leader)))
      return failure();
  finishRowKernel(kb, group, parts, plan.schedule,
                  traversalRows(parts.graph, plan.reversed));
  return success();
}

Value AggregationKernel::maskedSum(Value a, Value term) {
  if (plan.kind != gnn::ReduceKind::sum && plan.kind != gnn::ReduceKind::mean)
    return Value();
  auto select = term.getDefiningOp<arith::SelectOp>();
  if (!select || !matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
    return Value();
  Value sum = arith::AddFOp::create(b, loc, a, select.getTrueValue());
  return arith::SelectOp::create(b, loc, select.getCondition(), sum, a);
}

FailureOr<SmallVector<Value>> AggregationKernel::accumulate(const EdgeRef &e,
                                                            ValueRange acc) {
  int64_t vec = plan.vec;
  SmallVector<Value> next, edgeTerms, actives;
  for (int64_t j = 0; j < plan.part.chunks; ++j) {
    Value c = chunkOffset(j);
    Value active = chunkActive(j, c);
    actives.push_back(active);
    Value safe =
        active
            ? arith::SelectOp::create(b, loc, active, c, kb.idx(0)).getResult()
            : c;
    SmallVector<SmallVector<Value>> at = runIndices(kb, rowType, safe, vec);
    if (failed(heads.share(kb, eval, e, at, rowType)))
      return failure();
    FailureOr<SmallVector<Value>> terms = chunkTerms(e, safe, at);
    if (failed(terms))
      return failure();
    for (int64_t v = 0; v < vec; ++v) {
      Value a = acc[j * vec + v];
      Value term = kb.castFloat((*terms)[v], accType);
      Value n = maskedSum(a, term);
      if (!n)
        n = rule(b, a, term);
      if (active)
        n = arith::SelectOp::create(b, loc, active, n, a);
      next.push_back(n);
      edgeTerms.push_back(term);
    }
  }
  if (plan.trackWinner)
    updateCodes(e, acc, edgeTerms, actives, next);
  return next;
}

FailureOr<SmallVector<Value>>
AggregationKernel::chunkTerms(const EdgeRef &e, Value safe,
                              ArrayRef<SmallVector<Value>> at) {
  int64_t vec = plan.vec;
  SmallVector<Value> terms;
  if (!plan.spmm) {
    if (failed(eval.prefetchRun(plan.input, e, at)))
      return failure();
    for (int64_t v = 0; v < vec; ++v) {
      FailureOr<Value> x = eval.elementAt(plan.input, e, at[v]);
      if (failed(x))
        return failure();
      terms.push_back(*x);
    }
    return terms;
  }
  Value node = plan.reversed ? e.dst : e.src;
  if (nodeEval.computes(plan.input)) {
    for (int64_t v = 0; v < vec; ++v) {
      FailureOr<Value> x =
          nodeEval.element(plan.input, node, kb.add(safe, kb.idx(v)));
      if (failed(x))
        return failure();
      terms.push_back(*x);
    }
  } else {
    terms = kb.load(kb.operand(plan.input),
                    kb.add(kb.mul(node, plan.row), safe), vec);
  }
  // The weights broadcast over the innermost dimension: one weight for the
  // run's elements when they share a head.
  if (plan.weights) {
    for (int64_t v = 0; v < vec; ++v) {
      FailureOr<Value> w =
          eval.elementAt(plan.weights, e, ArrayRef(at[v]).drop_back());
      if (failed(w))
        return failure();
      terms[v] = arith::MulFOp::create(b, loc, *w, terms[v]);
    }
  }
  return terms;
}

void AggregationKernel::updateCodes(const EdgeRef &e, ValueRange acc,
                                    ArrayRef<Value> edgeTerms,
                                    ArrayRef<Value> actives,
                                    SmallVectorImpl<Value> &next) {
  // Neighbour ids from 2^p on have no exact code (-2: one edge, found by
  // comparing values).
  int64_t idLimit = int64_t(1) << (kb.ft.isF64() ? 53 : 24);
  arith::CmpFPredicate beyond = plan.kind == gnn::ReduceKind::max
                                    ? arith::CmpFPredicate::OGT
                                    : arith::CmpFPredicate::OLT;
  // The edge's code without weights: its neighbour's id.
  Value here;
  if (plan.byNeighbour) {
    Value nbr = plan.reversed ? e.dst : e.src;
    Value exact = kb.lt(nbr, kb.idx(idLimit));
    Value id = arith::SIToFPOp::create(
        b, loc, accType,
        arith::IndexCastOp::create(b, loc, b.getI64Type(), nbr));
    here = arith::SelectOp::create(b, loc, exact, id, kb.fp(accType, -2.0));
  }
  for (int64_t j = 0; j < plan.part.chunks; ++j)
    for (int64_t v = 0; v < plan.vec; ++v) {
      int64_t i = j * plan.vec + v;
      Value code = acc[plan.values + i];
      Value term = edgeTerms[i];
      Value wins = arith::CmpFOp::create(b, loc, beyond, term, acc[i]);
      Value ties = eq(b, term, acc[i]);
      // code' = beyond ? here : equal ? (code >= 0 ? -3 : code - 1)
      //       : code, with here -2 (one edge) with weights and for reduce.
      Value more = arith::SubFOp::create(b, loc, code, kb.fp(accType, 1.0));
      if (plan.byNeighbour) {
        Value named = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                            code, kb.fp(accType, 0.0));
        more =
            arith::SelectOp::create(b, loc, named, kb.fp(accType, -3.0), more);
      }
      Value kept = arith::SelectOp::create(b, loc, ties, more, code);
      Value restart = plan.byNeighbour ? here : kb.fp(accType, -2.0);
      Value n = arith::SelectOp::create(b, loc, wins, restart, kept);
      if (Value active = actives[j])
        n = arith::SelectOp::create(b, loc, active, n, code);
      next.push_back(n);
    }
}

LogicalResult AggregationKernel::storeChunk(int64_t j, ValueRange acc,
                                            Value count, Value empty,
                                            Value leader) {
  int64_t vec = plan.vec;
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
    if (plan.kind == gnn::ReduceKind::mean) {
      Value n = arith::SIToFPOp::create(
          b, loc, accType,
          arith::IndexCastOp::create(b, loc, b.getI64Type(), count));
      a = arith::DivFOp::create(b, loc, a, n);
    }
    a = kb.castFloat(a, kb.ft);
    a = arith::SelectOp::create(b, loc, empty, kb.fp(0.0), a);
    FailureOr<Value> out =
        kb.applyConsumers(parts.consumers, plan.op->getResult(0), a, rowIdx,
                          kb.add(c, kb.idx(v)));
    if (failed(out))
      return failure();
    outs.push_back(*out);
  }
  kb.store(outs, kb.result(0), kb.add(kb.mul(rowIdx, plan.row), c));
  if (!plan.trackWinner)
    return success();
  // A NaN extremum's code is NaN (the extremum itself), whatever the walk
  // counted before or after the NaN.
  SmallVector<Value> codes;
  for (int64_t v = 0; v < vec; ++v) {
    Value a = acc[j * vec + v];
    Value isNaN =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a, a);
    Value code = arith::SelectOp::create(b, loc, isNaN, a,
                                         acc[plan.values + j * vec + v]);
    codes.push_back(kb.castFloat(code, kb.ft));
  }
  kb.store(codes, kb.result(1), kb.add(kb.mul(rowIdx, plan.row), c));
  return success();
}

/// Lowers an aggregation group (spmm or reduce with its fused edge producers
/// and elementwise consumers) to a row kernel: see AggregationKernel.
LogicalResult mlir::gnnk::lowerAggregation(KernelGroupOp group,
                                           GroupParts &parts, int indexBits) {
  if (auto reduce = dyn_cast<gnn::ReduceOp>(parts.anchor);
      reduce && reduce.getRelation())
    return lowerRelationSum(group, parts, indexBits);
  FailureOr<AggregationPlan> plan = AggregationPlan::of(group, parts);
  if (failed(plan))
    return failure();
  return AggregationKernel(group, parts, *plan, indexBits).build();
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
