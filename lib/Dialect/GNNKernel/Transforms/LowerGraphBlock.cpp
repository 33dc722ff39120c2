//===- LowerGraphBlock.cpp - a whole function, one block per graph --------===//
//
// Part of gnnc. The `graph_block` family (gnn/Dialect/GNN/Transforms/
// GraphBlock.h) under the `block_per_graph` mapping: block g runs every step
// of the function for the nodes graph_ptr[g] .. graph_ptr[g + 1] of the
// batch, each step a loop of the block's threads over the graph's elements
// then a barrier, the values later steps read kept in shared arrays:
//
//   base = graph_ptr[g]; n = graph_ptr[g + 1] - base
//   for t in tid, tid + block, ... < n * row:       // a step, e.g. a matmul
//     node = base + t / row; j = t % row
//     sh0[t] = init + sum_k A(node, k) * W[k, j]
//   __syncthreads()
//   for t ...:                                      // an spmm
//     sh1[t] = sum over the node's edges of sh0[(src - base) * row + j]
//   ...
//
// Every edge of the batch joins two nodes of one graph (the runtime's
// graph_ptr is built so), so a block reads only its own graph's rows.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"
#include "gnn/Dialect/GNN/IR/GraphBlock.h"
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gnnk;
using mlir::gnn::GraphBlockPlan;
using mlir::gnn::KernelGroupOp;

namespace {
/// Builds the kernel of one graph-block group.
class GraphBlockLowering {
public:
  GraphBlockLowering(KernelGroupOp group, const GraphBlockPlan &plan,
                     int indexBits)
      : group(group), plan(plan), block(group.getScheduleAttr().getBlock()),
        kb(group, group.getKernel().str(), block, indexBits), b(kb.b),
        loc(kb.loc) {}

  LogicalResult run();

private:
  /// Runs `body` for each element (node, flat position k in its row of
  /// `row` elements, position t in the graph) of the block's graph, the
  /// block's threads striding over them.
  LogicalResult
  forElements(int64_t row,
              function_ref<LogicalResult(Value node, Value k, Value t)> body);
  /// The value of a step's op at `node`, position `k` in its row.
  FailureOr<Value> step(Operation *op, Value node, Value k);
  FailureOr<Value> degree(mlir::gnn::DegreeOp op, Value node);
  FailureOr<Value> spmm(mlir::gnn::SpmmOp op, Value node, Value k);
  FailureOr<Value> matmul(linalg::MatmulOp op, Value node, Value k);
  /// The nodes per thread of a tiled matmul step of `op`, 0 when it is
  /// computed element by element.
  int64_t matmulTile(linalg::MatmulOp op) const;
  /// A matmul step by columns: each thread takes a column j of the result
  /// for up to `tile` of the graph's nodes, so that it reads the weight's
  /// W[k, j] once for all of them; stores into `array` (-1: none) and the
  /// results.
  LogicalResult tiledMatmul(linalg::MatmulOp op, int64_t tile, int array);
  /// The body of `op` at loop indices `loopIdx` (d0 the node).
  FailureOr<Value> generic(linalg::GenericOp op, ValueRange loopIdx);
  /// The element of `tensor`, computed in the group, at `map(loopIdx)`:
  /// from its shared array, or evaluated (an elementwise op).
  FailureOr<Value> element(Value tensor, AffineMap map, ValueRange loopIdx,
                           Operation *where);
  /// Stores `v` at (node, k) into every result the group returns `value` as.
  void storeResults(Value value, Value v, Value node, Value k, int64_t row);

  KernelGroupOp group;
  const GraphBlockPlan &plan;
  int64_t block;
  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  /// The thread's index in the block, the graph's first node and its size.
  Value tid, base, count;
  /// The shared arrays, and where each value read from one lives.
  SmallVector<Value> arrays;
  llvm::DenseMap<Value, Value> inShared;
};
} // namespace

static int64_t rowOf(Value v) {
  int64_t row = 1;
  for (int64_t d : cast<RankedTensorType>(v.getType()).getShape().drop_front())
    row *= d;
  return row;
}

LogicalResult GraphBlockLowering::forElements(
    int64_t row, function_ref<LogicalResult(Value, Value, Value)> body) {
  auto loop =
      scf::ForOp::create(b, loc, tid, kb.mul(count, row), kb.idx(block));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value t = loop.getInductionVar();
  return body(kb.add(base, kb.div(t, row)), kb.rem(t, row), t);
}

FailureOr<Value> GraphBlockLowering::degree(mlir::gnn::DegreeOp op,
                                            Value node) {
  Value ptr = kb.graph(op.getReversed() ? "csc_col_ptr" : "csr_row_ptr");
  Value d = kb.sub(kb.loadIndex(ptr, kb.add(node, kb.idx(1))),
                   kb.loadIndex(ptr, node));
  Value di = arith::IndexCastOp::create(b, loc, b.getI64Type(), d);
  return arith::SIToFPOp::create(b, loc, kb.ft, di).getResult();
}

FailureOr<Value> GraphBlockLowering::spmm(mlir::gnn::SpmmOp op, Value node,
                                          Value k) {
  bool reversed = op.getReversed();
  RowTraversal t = traverse(kb, reversed, node);
  Value input = op.getInput();
  auto type = cast<RankedTensorType>(input.getType());
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(type.getRank(), group.getContext());
  Value weights = op.getWeights();
  LogicalResult status = success();
  ForEdgesOp loop = edgeLoop(
      kb, t, t.begin, kb.idx(1), {kb.fp(0.0)}, reversed, node,
      [&](const EdgeRef &e, ValueRange acc) -> FailureOr<SmallVector<Value>> {
        Value other = reversed ? e.dst : e.src;
        SmallVector<Value> at = kb.rowIndices(other, k, type);
        FailureOr<Value> x = kb.access(input, identity, at, op);
        if (failed(x))
          return failure();
        Value term = *x;
        if (weights) {
          // The edge's weights [E, d1 .. dm] scale the input's elements
          // with the same leading indices (a head's weight, all its
          // features).
          auto wt = cast<RankedTensorType>(weights.getType());
          Value pos;
          int64_t stride = 1;
          for (int64_t d = wt.getRank() - 1; d >= 1; --d) {
            Value part = kb.mul(at[d], stride);
            pos = pos ? kb.add(pos, part) : part;
            stride *= wt.getDimSize(d);
          }
          Value first = kb.mul(e.slot, stride);
          pos = pos ? kb.add(first, pos) : first;
          term = arith::MulFOp::create(b, loc, term,
                                       kb.load(kb.operand(weights), pos)[0]);
        }
        return SmallVector<Value>{arith::AddFOp::create(b, loc, acc[0], term)};
      },
      status);
  if (failed(status))
    return failure();
  Value sum = loop.getResult(0);
  if (op.getReduce() != mlir::gnn::ReduceKind::mean)
    return sum;
  // The mean over the node's edges, 0 for a node without any.
  Value n = kb.sub(t.end, t.begin);
  Value nf = arith::SIToFPOp::create(
      b, loc, kb.ft, arith::IndexCastOp::create(b, loc, b.getI64Type(), n));
  Value empty =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, n, kb.idx(0));
  Value mean = arith::DivFOp::create(b, loc, sum, nf);
  return arith::SelectOp::create(b, loc, empty, kb.fp(0.0), mean).getResult();
}

/// The extent of a matmul's reduction d2, from the weight's static shape.
static FailureOr<int64_t> reductionExtent(linalg::MatmulOp op) {
  Value w = op.getDpsInputOperand(1)->get();
  for (auto [r, e] : llvm::enumerate(op.getIndexingMapsArray()[1].getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == 2)
      return cast<RankedTensorType>(w.getType()).getDimSize(r);
  return op->emitOpError("has a weight not indexed by the reduction d2");
}

FailureOr<Value> GraphBlockLowering::matmul(linalg::MatmulOp op, Value node,
                                            Value k) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value a = op.getDpsInputOperand(0)->get();
  Value w = op.getDpsInputOperand(1)->get();
  Value init = op.getDpsInitOperand(0)->get();
  // The reduction d2's extent, from the weight's static shape.
  FailureOr<int64_t> extentOr = reductionExtent(op);
  if (failed(extentOr))
    return failure();
  int64_t extent = *extentOr;
  FailureOr<Value> start = kb.access(init, maps[2], {node, k, kb.idx(0)}, op);
  if (failed(start))
    return failure();
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(extent), kb.idx(1),
                                 ValueRange{*start});
  loop->setAttr(kUnrollAttrName, b.getI64IntegerAttr(4));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value r = loop.getInductionVar();
    FailureOr<Value> x = kb.access(a, maps[0], {node, k, r}, op);
    if (failed(x))
      return failure();
    FailureOr<Value> y = kb.access(w, maps[1], {node, k, r}, op);
    if (failed(y))
      return failure();
    Value sum =
        math::FmaOp::create(b, loc, *x, *y, loop.getRegionIterArgs()[0]);
    scf::YieldOp::create(b, loc, sum);
  }
  return loop.getResult(0);
}

/// The most nodes a thread of a tiled matmul takes (its accumulators).
static constexpr int64_t kMaxMatmulTile = 16;

int64_t GraphBlockLowering::matmulTile(linalg::MatmulOp op) const {
  // The weight's element must not depend on the node (d0).
  AffineMap w = op.getIndexingMapsArray()[1];
  if (llvm::any_of(w.getResults(), [](AffineExpr e) {
        auto d = dyn_cast<AffineDimExpr>(e);
        return d && d.getPosition() == 0;
      }))
    return 0;
  int64_t cols = rowOf(op->getResult(0));
  int64_t groups = std::max<int64_t>(1, block / cols);
  int64_t tile = (plan.capacity + groups - 1) / groups;
  return tile <= kMaxMatmulTile ? tile : 0;
}

LogicalResult GraphBlockLowering::tiledMatmul(linalg::MatmulOp op, int64_t tile,
                                              int array) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value value = op->getResult(0);
  Value a = op.getDpsInputOperand(0)->get();
  Value w = op.getDpsInputOperand(1)->get();
  Value init = op.getDpsInitOperand(0)->get();
  int64_t cols = rowOf(value);
  int64_t groups = std::max<int64_t>(1, block / cols);
  FailureOr<int64_t> extentOr = reductionExtent(op);
  if (failed(extentOr))
    return failure();
  int64_t extent = *extentOr;
  // Units (column j, node group r) for a graph with nodes; none without.
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, count,
                                    kb.idx(0));
  Value units =
      arith::SelectOp::create(b, loc, any, kb.idx(cols * groups), kb.idx(0));
  auto loop = scf::ForOp::create(b, loc, tid, units, kb.idx(block));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value u = loop.getInductionVar();
  Value j = kb.rem(u, cols), r = kb.div(u, cols);
  // Node m of the unit: r + m * groups, clamped to the graph's last node
  // (whose rows are read but not stored) where the graph is smaller.
  Value last = kb.sub(count, kb.idx(1));
  SmallVector<Value> rows, nodes, valid, starts;
  for (int64_t m = 0; m < tile; ++m) {
    Value i = kb.add(r, kb.idx(m * groups));
    valid.push_back(kb.lt(i, count));
    rows.push_back(arith::SelectOp::create(b, loc, valid.back(), i, last));
    nodes.push_back(kb.add(base, rows.back()));
    FailureOr<Value> start =
        kb.access(init, maps[2], {nodes.back(), j, kb.idx(0)}, op);
    if (failed(start))
      return failure();
    starts.push_back(*start);
  }
  // Rows of `a` read as float4 runs where its layout allows: the standard
  // maps, a row of 4k elements, in shared memory or an argument. Row bases
  // are computed once, outside the loop over k.
  MLIRContext *ctx = op.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx);
  Value aBuffer = inShared.lookup(a);
  bool outside = !a.getDefiningOp() || !group->isAncestor(a.getDefiningOp());
  if (!aBuffer && outside && !KernelBuilder::fillConstant(a))
    aBuffer = kb.operand(a);
  // The weight stored [k, n] is read element by element (a warp's columns
  // j are consecutive: coalesced); stored [n, k] (a Linear's layout, the
  // matmul's `A Bᵀ` maps) each thread's row j is read 4 elements at a time
  // too, a warp's rows being apart.
  bool wRows = maps[1] == AffineMap::get(3, 0, {d1, d2}, ctx);
  bool runs = aBuffer && extent % 4 == 0 &&
              maps[0] == AffineMap::get(3, 0, {d0, d2}, ctx) &&
              (maps[1] == AffineMap::get(3, 0, {d2, d1}, ctx) || wRows) &&
              !KernelBuilder::fillConstant(w);
  Value wBuffer;
  if (runs && wRows && (!w.getDefiningOp() || !group->isAncestor(w.getDefiningOp())))
    wBuffer = kb.operand(w);
  int64_t step = runs ? 4 : 1;
  SmallVector<Value> rowBase;
  if (runs)
    for (int64_t m = 0; m < tile; ++m)
      rowBase.push_back(kb.mul(outside ? nodes[m] : rows[m], extent));
  auto reduction = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(extent),
                                      kb.idx(step), starts);
  reduction->setAttr(kUnrollAttrName, b.getI64IntegerAttr(runs ? 2 : 4));
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(reduction.getBody());
    Value k = reduction.getInductionVar();
    SmallVector<Value> ws;
    if (wBuffer)
      ws = kb.load(wBuffer, kb.add(kb.mul(j, extent), k), 4);
    for (int64_t i = 0; !wBuffer && i < step; ++i) {
      FailureOr<Value> y =
          kb.access(w, maps[1], {nodes[0], j, kb.add(k, kb.idx(i))}, op);
      if (failed(y))
        return failure();
      ws.push_back(*y);
    }
    SmallVector<Value> next;
    for (int64_t m = 0; m < tile; ++m) {
      SmallVector<Value> xs;
      if (runs) {
        xs = kb.load(aBuffer, kb.add(rowBase[m], k), 4);
      } else {
        FailureOr<Value> x = kb.access(a, maps[0], {nodes[m], j, k}, op);
        if (failed(x))
          return failure();
        xs.push_back(*x);
      }
      Value acc = reduction.getRegionIterArgs()[m];
      for (int64_t i = 0; i < step; ++i)
        acc = math::FmaOp::create(b, loc, xs[i], ws[i], acc);
      next.push_back(acc);
    }
    scf::YieldOp::create(b, loc, next);
  }
  for (int64_t m = 0; m < tile; ++m) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, valid[m], false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value v = reduction.getResult(m);
    if (array >= 0)
      kb.store(v, arrays[array], kb.add(kb.mul(rows[m], cols), j));
    storeResults(value, v, nodes[m], j, cols);
  }
  return success();
}

FailureOr<Value> GraphBlockLowering::generic(linalg::GenericOp op,
                                             ValueRange loopIdx) {
  Block &payload = op.getRegion().front();
  SmallVector<Value> args;
  for (OpOperand &operand : op->getOpOperands()) {
    if (payload.getArgument(operand.getOperandNumber()).use_empty()) {
      args.push_back(kb.fp(getElementTypeOrSelf(operand.get().getType()), 0));
      continue;
    }
    FailureOr<Value> v = kb.access(
        operand.get(), op.getMatchingIndexingMap(&operand), loopIdx, op);
    if (failed(v))
      return failure();
    args.push_back(*v);
  }
  FailureOr<SmallVector<Value>> y = kb.inlineBody(op, args, loopIdx);
  if (failed(y))
    return failure();
  return (*y)[0];
}

FailureOr<Value> GraphBlockLowering::element(Value tensor, AffineMap map,
                                             ValueRange loopIdx,
                                             Operation *where) {
  SmallVector<Value> idx;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      idx.push_back(loopIdx[d.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      idx.push_back(kb.idx(c.getValue()));
    else
      return where->emitOpError("has an indexing map the CUDA backend does "
                                "not support (only dimensions and constants)");
  }
  auto type = cast<RankedTensorType>(tensor.getType());
  if (Value array = inShared.lookup(tensor)) {
    Value local = kb.mul(kb.sub(idx[0], base), rowOf(tensor));
    Value pos =
        type.getRank() > 1
            ? kb.add(local, flatIndex(kb, type, ArrayRef(idx).drop_front()))
            : local;
    return kb.load(array, pos)[0];
  }
  // An elementwise op writes at the identity map: its loop indices are the
  // element's.
  if (auto op = tensor.getDefiningOp<linalg::GenericOp>())
    return generic(op, idx);
  return where->emitOpError("reads a value of the graph block that no step "
                            "keeps in shared memory");
}

FailureOr<Value> GraphBlockLowering::step(Operation *op, Value node, Value k) {
  if (auto d = dyn_cast<mlir::gnn::DegreeOp>(op))
    return degree(d, node);
  if (auto s = dyn_cast<mlir::gnn::SpmmOp>(op))
    return spmm(s, node, k);
  if (auto m = dyn_cast<linalg::MatmulOp>(op))
    return matmul(m, node, k);
  if (auto g = dyn_cast<linalg::GenericOp>(op))
    return generic(
        g, kb.rowIndices(node, k,
                         cast<RankedTensorType>(g->getResult(0).getType())));
  return op->emitOpError("is not a step of a graph block");
}

void GraphBlockLowering::storeResults(Value value, Value v, Value node, Value k,
                                      int64_t row) {
  for (auto [i, y] : llvm::enumerate(group.getYield().getValues()))
    if (y == value)
      kb.store(v, kb.result(i), kb.add(kb.mul(node, row), k));
}

LogicalResult GraphBlockLowering::run() {
  auto mapping = ForBlocksOp::create(b, loc, kb.size("graphs"), 32);
  Block *body = new Block();
  mapping.getBody().push_back(body);
  Value g = body->addArgument(b.getIndexType(), loc);
  Value team = body->addArgument(b.getIndexType(), loc);
  Value lane = body->addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(body);
  tid = kb.add(kb.mul(team, 32), lane);
  Value ptr = kb.graph("graph_ptr");
  base = kb.loadIndex(ptr, g);
  count = kb.sub(kb.loadIndex(ptr, kb.add(g, kb.idx(1))), base);
  auto bufferType = MemRefType::get({ShapedType::kDynamic}, kb.ft);
  for (int64_t rows : plan.arrayRows)
    arrays.push_back(SharedOp::create(
        b, loc, bufferType, b.getI64IntegerAttr(rows * plan.capacity)));
  kb.groupElement = [this](Value tensor, AffineMap map, ValueRange loopIdx,
                           Operation *where) {
    return element(tensor, map, loopIdx, where);
  };

  ValueRange yields = group.getYield().getValues();
  llvm::DenseSet<Value> stored;
  for (auto [s, op] : llvm::enumerate(plan.steps)) {
    Value value = op->getResult(0);
    int64_t row = rowOf(value);
    int array = plan.stepArray[s];
    auto mm = dyn_cast<linalg::MatmulOp>(op);
    if (int64_t tile = mm ? matmulTile(mm) : 0) {
      if (failed(tiledMatmul(mm, tile, array)))
        return failure();
    } else if (failed(forElements(row, [&](Value node, Value k, Value t) {
                 FailureOr<Value> v = step(op, node, k);
                 if (failed(v))
                   return failure();
                 if (array >= 0)
                   kb.store(*v, arrays[array], t);
                 storeResults(value, *v, node, k, row);
                 return success();
               })))
      return failure();
    stored.insert(value);
    if (array >= 0)
      inShared[value] = arrays[array];
    BarrierOp::create(b, loc);
  }
  // Results that no step computes: evaluated where they are stored.
  for (Value y : yields) {
    if (!stored.insert(y).second)
      continue;
    auto type = cast<RankedTensorType>(y.getType());
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(type.getRank(), group.getContext());
    if (failed(forElements(rowOf(y), [&](Value node, Value k, Value) {
          FailureOr<Value> v =
              element(y, identity, kb.rowIndices(node, k, type), group);
          if (failed(v))
            return failure();
          storeResults(y, *v, node, k, rowOf(y));
          return success();
        })))
      return failure();
  }
  YieldOp::create(b, loc);
  kb.kernel->setAttr(kMaxGraphNodesAttrName,
                     b.getI64IntegerAttr(plan.capacity));
  MLIRContext *ctx = group.getContext();
  SmallVector<AffineExpr> rows(group.getNumResults(),
                               getAffineSymbolExpr(0, ctx));
  Value graph =
      cast<mlir::gnn::GraphOpInterface>(
          *llvm::find_if(group.getBody().front(),
                         [](Operation &op) {
                           return isa<mlir::gnn::GraphOpInterface>(op);
                         }))
          .getGraphOperand();
  LaunchOp launch = kb.finish(getAffineSymbolExpr(2, ctx), rows, graph);
  group->replaceAllUsesWith(launch->getResults());
  return success();
}

static LogicalResult lowerGraphBlock(KernelGroupOp group, int indexBits) {
  auto capacity =
      group->getAttrOfType<IntegerAttr>(mlir::gnn::kGraphNodesAttrName);
  if (!capacity || capacity.getInt() < 1)
    return group.emitOpError()
           << "expects a positive `" << mlir::gnn::kGraphNodesAttrName
           << "` (the nodes per graph its kernel holds) on a graph_block group";
  SmallVector<Value> results(group.getYield().getValues());
  std::string why;
  FailureOr<GraphBlockPlan> plan = GraphBlockPlan::of(
      group.getBody().front(), results, capacity.getInt(), why);
  if (failed(plan))
    return group.emitOpError() << "cannot run as a graph block: " << why;
  if (plan->sharedBytes() > ::gnn::kBlockSharedBytes)
    return group.emitOpError()
           << "needs " << plan->sharedBytes()
           << " bytes of shared memory for graphs of " << capacity.getInt()
           << " nodes, more than a block's " << ::gnn::kBlockSharedBytes;
  return GraphBlockLowering(group, *plan, indexBits).run();
}

void mlir::gnnk::populateGraphBlockLoweringPatterns(RewritePatternSet &patterns,
                                                    int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), mlir::gnn::GroupFamily::graph_block,
      mlir::gnn::Mapping::block_per_graph, lowerGraphBlock, indexBits);
}
