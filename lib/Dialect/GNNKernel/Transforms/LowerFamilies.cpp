//===- LowerFamilies.cpp - kernel groups to gnnk kernels ------------------===//
//
// Part of gnnc. The lowering of every group family except attention
// (LowerAttention.cpp) and extremum_grad (LowerExtremumGrad.cpp): dense
// elementwise/reduction groups, degree, edge maps
// (gather, sddmm), edge softmax and aggregations (spmm, reduce) with fused
// edge producer chains and elementwise consumers.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gnnk;
using gnn::KernelGroupOp;

//===----------------------------------------------------------------------===//
// GroupParts
//===----------------------------------------------------------------------===//

bool GroupParts::isSizeQuery(Operation *op) {
  if (isa<tensor::DimOp, tensor::EmptyOp, arith::ConstantOp>(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return KernelBuilder::fillConstant(fill.getResult(0)).has_value();
  return false;
}

FailureOr<GroupParts> GroupParts::of(KernelGroupOp group) {
  GroupParts parts;
  SmallVector<Operation *> ops;
  for (Operation &op : group.getBody().front().without_terminator())
    if (!isSizeQuery(&op))
      ops.push_back(&op);
  int anchor = -1;
  for (auto [i, op] : llvm::enumerate(ops))
    if (isa<gnn::GraphOpInterface>(op))
      anchor = i;
  if (anchor < 0) {
    if (ops.size() != 1 || !isa<linalg::LinalgOp>(ops[0]))
      return group.emitOpError("expects a dense kernel group to hold one "
                               "linalg op");
    parts.anchor = ops[0];
  } else {
    parts.anchor = ops[anchor];
    parts.graph = cast<gnn::GraphOpInterface>(parts.anchor).getGraphOperand();
    parts.producers.assign(ops.begin(), ops.begin() + anchor);
    for (Operation *op : llvm::drop_begin(ops, anchor + 1)) {
      auto consumer = dyn_cast<linalg::GenericOp>(op);
      if (!consumer)
        return op->emitOpError("is not an elementwise consumer; a kernel "
                               "group ends with its anchor op and its "
                               "consumers");
      parts.consumers.push_back(consumer);
    }
  }
  Operation *last = parts.consumers.empty() ? parts.anchor
                                            : parts.consumers.back();
  ValueRange yields = group.getYield().getValues();
  bool dense = !parts.graph;
  if (!dense && yields.size() == 2) {
    for (Operation *op : ops)
      if (auto softmax = dyn_cast<gnn::EdgeSoftmaxOp>(op);
          softmax && softmax.getLse() == yields[1])
        parts.lse = yields[1];
    Value winner;
    if (auto spmm = dyn_cast<gnn::SpmmOp>(parts.anchor))
      winner = spmm.getWinner();
    else if (auto reduce = dyn_cast<gnn::ReduceOp>(parts.anchor))
      winner = reduce.getWinner();
    if (winner && winner == yields[1])
      parts.winner = winner;
  }
  Value side = parts.lse ? parts.lse : parts.winner;
  bool yieldsLast =
      dense ? yields == last->getResults()
            : yields.size() == 1 + static_cast<size_t>(bool(side)) &&
                  yields[0] == last->getResult(0) &&
                  (last->getNumResults() == 1 ||
                   (last->getNumResults() == 2 &&
                    (last->getResult(1) == side ||
                     (!side && last->getResult(1).use_empty()))));
  if (!yieldsLast)
    return group.emitOpError(
        "expects to yield the result of its last op (and the log-sum-exp of "
        "its edge_softmax or the winner codes of its spmm or reduce)");
  // f16, bf16, f32 or f64 (gnn-lower-to-kernels checks first that a
  // function has one arithmetic type, so a group has one too).
  for (Operation &op : group.getBody().front().without_terminator())
    for (Type t : llvm::concat<Type>(op.getOperandTypes(),
                                     op.getResultTypes()))
      if (auto tensor = dyn_cast<RankedTensorType>(t))
        if (!mlir::gnn::isGNNFloatType(tensor.getElementType()))
          return op.emitOpError() << "uses " << t
                                  << "; the CUDA backend supports only f16, "
                                     "bf16, f32 and f64 tensors";
  return parts;
}

//===----------------------------------------------------------------------===//
// EdgeEvaluator
//===----------------------------------------------------------------------===//

bool EdgeEvaluator::inGroup(Value v) const {
  Operation *def = v.getDefiningOp();
  return def && group->isAncestor(def) && !GroupParts::isSizeQuery(def);
}

Value mlir::gnnk::flatIndex(KernelBuilder &kb, RankedTensorType type,
                            ValueRange idx) {
  assert(static_cast<int64_t>(idx.size()) + 1 == type.getRank() &&
         "one row index per dimension after the first");
  Value flat;
  int64_t stride = 1;
  for (int64_t r = type.getRank() - 1; r >= 1; --r) {
    Value term = kb.mul(idx[r - 1], stride);
    flat = flat ? kb.add(term, flat) : term;
    stride *= type.getDimSize(r);
  }
  return flat ? flat : kb.idx(0);
}

/// Whether `v` can be used at `b`'s insertion point: defined before it in
/// its block or in a block enclosing it.
static bool availableAt(Value v, OpBuilder &b) {
  Block *def = v.getParentBlock();
  Block *block = b.getInsertionBlock();
  Block::iterator point = b.getInsertionPoint();
  while (block != def) {
    Operation *parent = block->getParentOp();
    if (!parent || !parent->getBlock())
      return false;
    point = Block::iterator(parent);
    block = parent->getBlock();
  }
  Operation *op = v.getDefiningOp();
  return !op || point == block->end() || op->isBeforeInBlock(&*point);
}

EdgeEvaluator::Key EdgeEvaluator::keyOf(Value value, const EdgeRef &e,
                                        ValueRange idx) {
  Key key = {value.getAsOpaquePointer(), e.slot.getAsOpaquePointer()};
  for (Value i : idx)
    key.push_back(i.getAsOpaquePointer());
  return key;
}

void EdgeEvaluator::remember(Value value, const EdgeRef &e, ValueRange idx,
                             Value element) {
  remembered[keyOf(value, e, idx)] = element;
}

/// Row (node, type(e)) of a nodes x R x ... tensor, in rows of R's trailing
/// size: node * R + csr_type[slot]; the kernel records that it indexes by R
/// relations.
static Value relationRow(KernelBuilder &kb, Value node, int64_t relations,
                         Value slot) {
  noteRelations(kb.kernel, relations);
  Value type = kb.loadIndex(kb.graph("csr_type"), slot);
  return kb.add(kb.mul(node, relations), type);
}

Value EdgeEvaluator::gatheredRow(gnn::GatherOp gather, const EdgeRef &e) {
  Value node = gather.getEnd() == gnn::EdgeEnd::src ? e.src : e.dst;
  if (!gather.getRelation())
    return node;
  return relationRow(kb, node, gather.getInput().getType().getDimSize(1),
                     e.slot);
}

LogicalResult EdgeEvaluator::prefetchRun(Value value, const EdgeRef &e,
                                         ArrayRef<SmallVector<Value>> at) {
  auto type = cast<RankedTensorType>(value.getType());
  int n = at.size();
  if (n < 2 || overrides.count(value))
    return success();
  // The run of `buffer` rows `node`, remembered as the elements of `v`.
  auto loadRun = [&](Value v, Value buffer, Value node) -> LogicalResult {
    FailureOr<int64_t> row = rowElements(v, group);
    if (failed(row))
      return failure();
    Value k = flatIndex(kb, type, at.front());
    SmallVector<Value> run = kb.load(buffer, kb.add(kb.mul(node, *row), k), n);
    for (auto [idx, x] : llvm::zip(at, run))
      remember(v, e, idx, x);
    return success();
  };
  if (!inGroup(value))
    return loadRun(value, kb.operand(value), e.slot);
  Operation *def = value.getDefiningOp();
  if (auto gather = dyn_cast<gnn::GatherOp>(def))
    return loadRun(value, kb.operand(gather.getInput()), gatheredRow(gather, e));
  // Through element-wise ops reading their operands at their own indices.
  auto generic = dyn_cast<linalg::GenericOp>(def);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      generic.getNumLoops() != static_cast<unsigned>(type.getRank()))
    return success();
  for (OpOperand *in : generic.getDpsInputOperands()) {
    auto t = dyn_cast<RankedTensorType>(in->get().getType());
    if (!t || t.getShape().drop_front() != type.getShape().drop_front() ||
        !generic.getMatchingIndexingMap(in).isIdentity() ||
        KernelBuilder::fillConstant(in->get()))
      continue;
    // An edge tensor from outside the group is read at the edge's slot
    // (bodyAt finds the run remembered).
    if (failed(inGroup(in->get())
                   ? prefetchRun(in->get(), e, at)
                   : loadRun(in->get(), kb.operand(in->get()), e.slot)))
      return failure();
  }
  return success();
}

FailureOr<Value> EdgeEvaluator::element(Value value, const EdgeRef &e,
                                        Value k) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<Value> idx = kb.rowIndices(e.slot, k, type);
  return elementAt(value, e, ArrayRef(idx).drop_front());
}

FailureOr<Value> EdgeEvaluator::elementAt(Value value, const EdgeRef &e,
                                          ValueRange idx) {
  if (Value v = overrides.lookup(value))
    return v;
  if (Value v = recall(value, e, idx))
    return v;
  FailureOr<Value> v = compute(value, e, idx);
  if (succeeded(v))
    remember(value, e, idx, *v);
  return v;
}

Value EdgeEvaluator::recall(Value value, const EdgeRef &e,
                            ValueRange idx) const {
  auto it = remembered.find(keyOf(value, e, idx));
  return it != remembered.end() && availableAt(it->second, kb.b) ? it->second
                                                                 : Value();
}

FailureOr<Value> EdgeEvaluator::bodyAt(linalg::GenericOp generic,
                                       const EdgeRef &e, ValueRange loops,
                                       Value acc) {
  SmallVector<Value> args;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(in);
    if (!inGroup(in->get())) {
      // An edge tensor read at the edge's own indices may have been loaded
      // with its run (prefetchRun).
      if (map.isIdentity())
        if (Value v = recall(in->get(), e,
                             loops.take_front(map.getNumResults())
                                 .drop_front())) {
          args.push_back(v);
          continue;
        }
      FailureOr<Value> v = kb.access(in->get(), map, loops, generic);
      if (failed(v))
        return failure();
      args.push_back(*v);
      continue;
    }
    // An edge value of the group, read at the same edge.
    SmallVector<Value> at;
    for (auto [r, ex] : llvm::enumerate(map.getResults())) {
      auto d = dyn_cast<AffineDimExpr>(ex);
      if (!d)
        return generic.emitOpError("expects dimensions in the indexing maps "
                                   "of fused edge ops");
      if ((r == 0) != (d.getPosition() == 0))
        return generic.emitOpError("expects to read the edge values of its "
                                   "kernel group at its own edge (d0 first "
                                   "and only there)");
      if (r > 0)
        at.push_back(loops[d.getPosition()]);
    }
    FailureOr<Value> v = elementAt(in->get(), e, at);
    if (failed(v))
      return failure();
    args.push_back(*v);
  }
  args.push_back(acc);
  FailureOr<SmallVector<Value>> y = kb.inlineBody(generic, args, loops);
  if (failed(y))
    return failure();
  return (*y)[0];
}

Value EdgeEvaluator::dot(gnn::SddmmOp sddmm, Value lhs, Value pa, Value rhs,
                         Value pc, int64_t length) {
  OpBuilder &b = kb.b;
  // Vectors only where they tile the product (the rows then start at
  // multiples of the vector too: a row holds whole products).
  int64_t vector = length % dotVector == 0 ? dotVector : 1;
  Value first = dotLanes > 1 ? dotLane : kb.idx(0);
  auto loop = scf::ForOp::create(
      b, kb.loc, first, kb.idx(length / vector), kb.idx(dotLanes),
      ValueRange{
          kb.fp(getElementTypeOrSelf(sddmm.getResult().getType()), 0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = kb.mul(loop.getInductionVar(), vector);
    SmallVector<Value> xs = kb.load(lhs, kb.add(pa, t), vector);
    SmallVector<Value> ys = kb.load(rhs, kb.add(pc, t), vector);
    Value acc = loop.getRegionIterArgs()[0];
    for (auto [x, y] : llvm::zip(xs, ys))
      acc = math::FmaOp::create(b, kb.loc, x, y, acc);
    scf::YieldOp::create(b, kb.loc, acc);
  }
  Value sum = loop.getResult(0);
  if (dotLanes == 1)
    return sum;
  auto red = TeamReduceOp::create(b, kb.loc, ValueRange{sum}, 1, dotLanes);
  kb.buildCombine(red.getCombine(), {sum.getType()},
                  [&](OpBuilder &rb, ValueRange x, ValueRange y) {
                    return SmallVector<Value>{
                        arith::AddFOp::create(rb, kb.loc, x[0], y[0])};
                  });
  return red.getResult(0);
}

FailureOr<Value> EdgeEvaluator::compute(Value value, const EdgeRef &e,
                                        ValueRange rowIdx) {
  Operation *def = value.getDefiningOp();
  if (!inGroup(value)) {
    // An edge tensor computed elsewhere, in CSR slot order.
    FailureOr<int64_t> row = rowElements(value, group);
    if (failed(row))
      return failure();
    Value k = flatIndex(kb, cast<RankedTensorType>(value.getType()), rowIdx);
    return kb.load(kb.operand(value), kb.add(kb.mul(e.slot, *row), k))[0];
  }
  if (auto gather = dyn_cast<gnn::GatherOp>(def)) {
    FailureOr<int64_t> row = rowElements(gather.getResult(), gather);
    if (failed(row))
      return failure();
    Value k = flatIndex(kb, gather.getResult().getType(), rowIdx);
    return kb.load(kb.operand(gather.getInput()),
                   kb.add(kb.mul(gatheredRow(gather, e), *row), k))[0];
  }
  if (auto sddmm = dyn_cast<gnn::SddmmOp>(def)) {
    FailureOr<int64_t> inRow = rowElements(sddmm.getLhs(), sddmm);
    FailureOr<int64_t> outRow = rowElements(sddmm.getResult(), sddmm);
    if (failed(inRow) || failed(outRow))
      return failure();
    Value k = flatIndex(kb, sddmm.getResult().getType(), rowIdx);
    Value a = sddmm.getReversed() ? e.dst : e.src;
    Value c = sddmm.getReversed() ? e.src : e.dst;
    Value lhs = kb.operand(sddmm.getLhs()), rhs = kb.operand(sddmm.getRhs());
    OpBuilder &b = kb.b;
    if (sddmm.getKind() == gnn::SddmmKind::dot) {
      int64_t f = *inRow / *outRow;
      Value pa = kb.add(kb.mul(a, *inRow), kb.mul(k, f));
      Value pc = kb.add(kb.mul(c, *inRow), kb.mul(k, f));
      return dot(sddmm, lhs, pa, rhs, pc, f);
    }
    Value x = kb.load(lhs, kb.add(kb.mul(a, *inRow), k))[0];
    Value y = kb.load(rhs, kb.add(kb.mul(c, *inRow), k))[0];
    switch (sddmm.getKind()) {
    case gnn::SddmmKind::add: return arith::AddFOp::create(b, kb.loc, x, y).getResult();
    case gnn::SddmmKind::sub: return arith::SubFOp::create(b, kb.loc, x, y).getResult();
    default: return arith::MulFOp::create(b, kb.loc, x, y).getResult();
    }
  }
  auto generic = dyn_cast<linalg::GenericOp>(def);
  if (!generic || generic.getNumDpsInits() != 1)
    return def->emitOpError("cannot be fused into an edge loop");
  auto type = cast<RankedTensorType>(generic->getResult(0).getType());
  SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
  int64_t rank = type.getRank();
  // Parallel loop indices from the row indices (d0 is the edge), reductions
  // as loops.
  SmallVector<Value> idx(iters.size());
  idx[0] = e.slot;
  for (int64_t d = 1; d < rank; ++d)
    idx[d] = rowIdx[d - 1];
  for (int64_t d = 0; d < rank; ++d)
    if (iters[d] != utils::IteratorType::parallel)
      return generic.emitOpError("expects its parallel loops first when fused");
  // Reduction bounds from the operands' static shapes.
  SmallVector<int64_t> bounds(iters.size(), -1);
  for (OpOperand &operand : generic->getOpOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!t)
      continue;
    for (auto [r, ex] :
         llvm::enumerate(generic.getMatchingIndexingMap(&operand).getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(ex))
        if (d.getPosition() >= (unsigned)rank &&
            !ShapedType::isDynamic(t.getDimSize(r)))
          bounds[d.getPosition()] = t.getDimSize(r);
  }
  OpOperand *init = generic.getDpsInitOperand(0);
  Value start = kb.fp(type.getElementType(), 0.0);
  if (generic.payloadUsesValueFromOperand(init)) {
    std::optional<double> c = KernelBuilder::fillConstant(init->get());
    if (!c)
      return generic.emitOpError("reads an init that is not a constant fill; "
                                 "it cannot be fused into an edge loop");
    start = kb.fp(type.getElementType(), *c);
  }
  // The body at the current reduction indices, accumulating into `acc`.
  std::function<FailureOr<Value>(int64_t, Value)> nest =
      [&](int64_t d, Value acc) -> FailureOr<Value> {
    if (d == (int64_t)iters.size())
      return bodyAt(generic, e, idx, acc);
    if (bounds[d] < 0)
      return generic.emitOpError() << "has a reduction loop d" << d
                                   << " of unknown static size";
    OpBuilder &b = kb.b;
    auto loop = scf::ForOp::create(b, kb.loc, kb.idx(0), kb.idx(bounds[d]),
                                   kb.idx(1), ValueRange{acc});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    idx[d] = loop.getInductionVar();
    FailureOr<Value> inner = nest(d + 1, loop.getRegionIterArgs()[0]);
    if (failed(inner))
      return failure();
    scf::YieldOp::create(b, kb.loc, *inner);
    return loop.getResult(0);
  };
  return nest(rank, start);
}

//===----------------------------------------------------------------------===//
// NodeEvaluator
//===----------------------------------------------------------------------===//

bool NodeEvaluator::computes(Value value) const {
  Operation *def = value.getDefiningOp();
  return def && group->isAncestor(def) && !GroupParts::isSizeQuery(def) &&
         isa<gnn::DegreeOp, linalg::GenericOp>(def);
}

FailureOr<Value> NodeEvaluator::element(Value value, Value node, Value k) {
  auto type = cast<RankedTensorType>(value.getType());
  bool scalar = type.getRank() == 1;
  // Reuse only within the block being built (per-chunk scf.if blocks must
  // not see each other's values).
  if (scalar)
    if (Value v = scalars.lookup({value, node}))
      if (v.getParentBlock() == kb.b.getInsertionBlock())
        return v;
  auto remember = [&](Value v) {
    if (scalar)
      scalars[{value, node}] = v;
    return v;
  };
  if (!computes(value)) {
    FailureOr<int64_t> row = rowElements(value, group);
    if (failed(row))
      return failure();
    return remember(
        kb.load(kb.operand(value), kb.add(kb.mul(node, *row), k))[0]);
  }
  OpBuilder &b = kb.b;
  if (auto degree = value.getDefiningOp<gnn::DegreeOp>()) {
    Value ptr = kb.graph(degree.getReversed() ? "csc_col_ptr" : "csr_row_ptr");
    Value d = kb.sub(kb.loadIndex(ptr, kb.add(node, kb.idx(1))),
                     kb.loadIndex(ptr, node));
    Value di = arith::IndexCastOp::create(b, kb.loc, b.getI64Type(), d);
    return remember(arith::SIToFPOp::create(b, kb.loc, kb.ft, di));
  }
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (generic.getNumReductionLoops() || generic.getNumDpsInits() != 1 ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return generic.emitOpError("cannot be evaluated per node inside an "
                               "aggregation (expects parallel loops and an "
                               "unread init)");
  SmallVector<Value> idx = kb.rowIndices(node, k, type);
  SmallVector<Value> args;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(in);
    FailureOr<Value> v = kb.access(in->get(), map, idx, generic);
    if (failed(v))
      return failure();
    args.push_back(*v);
  }
  args.push_back(kb.fp(type.getElementType(), 0.0));
  FailureOr<SmallVector<Value>> y = kb.inlineBody(generic, args, idx);
  if (failed(y))
    return failure();
  return remember((*y)[0]);
}

/// Makes `kb.access` evaluate node tensors computed in the group with `eval`
/// (their first index is the node).
static void evaluateNodesInGroup(KernelBuilder &kb, NodeEvaluator &eval) {
  kb.groupElement = [&kb, &eval](Value tensor, AffineMap map,
                                 ValueRange loopIdx,
                                 Operation *where) -> FailureOr<Value> {
    if (!eval.computes(tensor))
      return where->emitOpError("reads a value computed inside its kernel "
                                "group that the CUDA backend cannot "
                                "evaluate there");
    auto type = cast<RankedTensorType>(tensor.getType());
    auto d0 = dyn_cast<AffineDimExpr>(map.getResult(0));
    if (!d0)
      return where->emitOpError("expects its first index to be a loop "
                                "index to read a node value of its group");
    Value flat = kb.idx(0);
    int64_t stride = 1;
    for (int64_t r = type.getRank() - 1; r >= 1; --r) {
      Value term;
      if (auto d = dyn_cast<AffineDimExpr>(map.getResult(r)))
        term = loopIdx[d.getPosition()];
      else if (auto c = dyn_cast<AffineConstantExpr>(map.getResult(r)))
        term = kb.idx(c.getValue());
      else
        return where->emitOpError("has an indexing map the CUDA backend "
                                  "does not support (only dimensions and "
                                  "constants)");
      flat = kb.add(flat, kb.mul(term, stride));
      stride *= type.getDimSize(r);
    }
    return eval.element(tensor, loopIdx[d0.getPosition()], flat);
  };
}

void mlir::gnnk::evaluateNodesInGroupFor(KernelBuilder &kb,
                                         NodeEvaluator &eval) {
  evaluateNodesInGroup(kb, eval);
}

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

/// The name of the kernel of `group`.
static std::string kernelName(KernelGroupOp group) {
  return group.getKernel().str();
}

/// Rows of the group's result.
static FailureOr<AffineExpr> resultRows(KernelGroupOp group) {
  return rowsExpr(group->getResult(0));
}

/// The graph a launch names: the group's, or for a dense group the
/// function's graph argument.
static Value graphFor(KernelGroupOp group) {
  auto func = group->getParentOfType<func::FuncOp>();
  for (BlockArgument arg : func.getArguments())
    if (isa<gnn::GraphType>(arg.getType()))
      return arg;
  return Value();
}

/// Replaces the group by the launch.
static void replaceGroup(KernelGroupOp group, LaunchOp launch) {
  group->replaceAllUsesWith(launch->getResults());
}

/// `ceil(threads / block)` as the grid expression.
static AffineExpr gridFor(AffineExpr threads, int64_t block) {
  return threads.ceilDiv(block);
}

//===----------------------------------------------------------------------===//
// Dense groups
//===----------------------------------------------------------------------===//

/// Nests scf.for loops over the static loops `d..` of `op` (skipping loop
/// `skip`, set by the caller; -1: none) carrying `acc`, evaluates the body at
/// the innermost point (inputs read at `idx`) and returns the final values.
/// With `wide`, every result is a sum `out + term` and `acc` is wider than
/// the results: the body runs with `out = 0` and its term is added to the
/// accumulator in the accumulator's type.
static FailureOr<SmallVector<Value>>
nestReductions(KernelBuilder &kb, linalg::GenericOp op,
               SmallVectorImpl<Value> &idx, ArrayRef<int64_t> bounds,
               int64_t d, int64_t skip, ValueRange acc, bool wide = false) {
  if (d == skip)
    return nestReductions(kb, op, idx, bounds, d + 1, skip, acc, wide);
  if (d == (int64_t)op.getNumLoops()) {
    SmallVector<Value> args;
    for (OpOperand *in : op.getDpsInputOperands()) {
      FailureOr<Value> a =
          kb.access(in->get(), op.getMatchingIndexingMap(in), idx, op);
      if (failed(a))
        return failure();
      args.push_back(*a);
    }
    if (!wide) {
      llvm::append_range(args, acc);
      return kb.inlineBody(op, args, idx);
    }
    for (OpOperand &init : op.getDpsInitsMutable())
      args.push_back(kb.fp(getElementTypeOrSelf(init.get().getType()), 0.0));
    FailureOr<SmallVector<Value>> terms = kb.inlineBody(op, args, idx);
    if (failed(terms))
      return failure();
    SmallVector<Value> sums;
    for (auto [a, t] : llvm::zip_equal(acc, *terms)) {
      Value term = t;
      if (term.getType() != a.getType())
        term = arith::ExtFOp::create(kb.b, kb.loc, a.getType(), term);
      sums.push_back(arith::AddFOp::create(kb.b, kb.loc, a, term));
    }
    return sums;
  }
  OpBuilder &b = kb.b;
  auto loop = scf::ForOp::create(b, kb.loc, kb.idx(0), kb.idx(bounds[d]),
                                 kb.idx(1), acc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  idx[d] = loop.getInductionVar();
  FailureOr<SmallVector<Value>> inner = nestReductions(
      kb, op, idx, bounds, d + 1, skip, loop.getRegionIterArgs(), wide);
  if (failed(inner))
    return failure();
  scf::YieldOp::create(b, kb.loc, *inner);
  return SmallVector<Value>(loop.getResults());
}

/// The block's sums of `values` (a block reduction keeping thread order:
/// gnnk.block_reduce's fixed tree).
static SmallVector<Value> blockSum(KernelBuilder &kb, ValueRange values,
                                   TypeRange types) {
  Location loc = kb.loc;
  auto red = BlockReduceOp::create(kb.b, loc, values);
  kb.buildCombine(red.getCombine(), types,
                  [&](OpBuilder &rb, ValueRange a, ValueRange c) {
                    SmallVector<Value> sums;
                    for (auto [x, y] : llvm::zip(a, c))
                      sums.push_back(arith::AddFOp::create(rb, loc, x, y));
                    return sums;
                  });
  return SmallVector<Value>(red.getResults());
}

/// The extent of reduction loop `d` as rows of nodes or edges: the rows of an
/// operand it indexes in the first place (none: failure, no diagnostic).
static FailureOr<AffineExpr> reductionExtent(linalg::LinalgOp op, int64_t d) {
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.getNumResults() &&
        map.getResult(0) == getAffineDimExpr(d, op->getContext()))
      if (FailureOr<AffineExpr> rows = rowsOf(operand.get()); succeeded(rows))
        return rows;
  }
  return failure();
}

/// Blocks a sum over rows aims for (an H100 or H200 holds 132 SMs x 8 blocks
/// of 256 threads at once), as the Aᵀ B gemm's row split in ProgramLowering.
constexpr int64_t kRowSumBlocks = 1024;
/// The fewest elements (rows x the static inner extent) a chunk of a split
/// sum walks: 8 per thread of a block, so the block reduction and the
/// partial's store are paid for by the loads.
constexpr int64_t kRowSumChunkElements = 2048;
/// Threads per block of a sum over rows.
constexpr int64_t kRowSumBlock = 256;
/// Lanes of a column-mode sum's team: consecutive result elements, a warp.
constexpr int64_t kColumnLanes = 32;

namespace {
/// A sum over rows into a small static result (lowerRowReduction's shape).
struct RowSum {
  linalg::GenericOp op;
  int64_t numParallel = 0, rowLoop = 0;
  ArrayRef<int64_t> bounds;
  /// Result elements (blocks per chunk) and the elements one row contributes
  /// to each (the product of the static reduction loops).
  int64_t count = 1, inner = 1;
  SmallVector<Type> initTypes, accTypes;
};
} // namespace

/// The loop indices of the result element `e` (the parallel loops, through
/// the output map; constant-0 indices of size-1 dimensions stay unset).
static SmallVector<Value> elementIndices(KernelBuilder &kb, RowSum &s,
                                         Value e) {
  SmallVector<Value> idx(s.op.getNumLoops());
  auto outType = cast<RankedTensorType>(s.op->getResult(0).getType());
  int64_t stride = s.count;
  AffineMap outMap = s.op.getMatchingIndexingMap(s.op.getDpsInitOperand(0));
  for (auto [r, x] : llvm::enumerate(outMap.getResults())) {
    stride /= outType.getDimSize(r);
    if (auto d = dyn_cast<AffineDimExpr>(x))
      idx[d.getPosition()] = kb.rem(kb.div(e, stride), outType.getDimSize(r));
  }
  return idx;
}

/// Fills `loop`'s body (its iteration arguments the accumulators) with the
/// terms of the row at its induction variable (`rowIndices` sets `idx`'s
/// row and static loop indices from it), then combines the block's sums
/// (blockSum): every thread gets them.
static FailureOr<SmallVector<Value>>
sumRowLoop(KernelBuilder &kb, RowSum &s, SmallVectorImpl<Value> &idx,
           scf::ForOp loop, function_ref<void(Value)> rowIndices) {
  {
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(loop.getBody());
    rowIndices(loop.getInductionVar());
    FailureOr<SmallVector<Value>> next =
        nestReductions(kb, s.op, idx, s.bounds, s.op.getNumLoops(), -1,
                       loop.getRegionIterArgs(), /*wide=*/true);
    if (failed(next))
      return failure();
    scf::YieldOp::create(kb.b, kb.loc, *next);
  }
  return blockSum(kb, loop.getResults(), s.accTypes);
}

/// The sums (in the accumulator types) of the terms of rows [lo, hi) for the
/// element whose parallel indices `idx` holds, by the block: the rows and
/// their static reduction loops flattened into one index, row-major, walked
/// `thread, thread + block, ...` (consecutive threads read consecutive
/// elements of a row), then a block reduction keeping thread order. Every thread
/// gets the sums.
static FailureOr<SmallVector<Value>>
blockRowSum(KernelBuilder &kb, RowSum &s, SmallVectorImpl<Value> &idx,
            Value lo, Value hi, Value thread) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  SmallVector<Value> zeros;
  for (Type t : s.accTypes)
    zeros.push_back(kb.fp(t, 0.0));
  SmallVector<int64_t> staticLoops;
  for (int64_t d = s.numParallel; d < (int64_t)s.op.getNumLoops(); ++d)
    if (d != s.rowLoop)
      staticLoops.push_back(d);
  // An empty static loop: no terms.
  if (s.inner == 0)
    return zeros;
  Value from = kb.add(kb.mul(lo, s.inner), thread);
  Value to = kb.mul(hi, s.inner);
  auto loop = scf::ForOp::create(b, loc, from, to, kb.idx(kRowSumBlock), zeros);
  // Several elements' loads in flight per thread (a thread's terms still
  // add in their order: the same bits as the rolled loop).
  loop->setAttr(kUnrollAttrName, b.getI64IntegerAttr(4));
  return sumRowLoop(kb, s, idx, loop, [&](Value flat) {
    idx[s.rowLoop] = kb.div(flat, s.inner);
    Value rest = kb.rem(flat, s.inner);
    for (int64_t d : llvm::reverse(staticLoops)) {
      if (d == staticLoops.front()) {
        idx[d] = rest; // already below its bound
        break;
      }
      idx[d] = kb.rem(rest, s.bounds[d]);
      rest = kb.div(rest, s.bounds[d]);
    }
  });
}

/// Column mode (a sum with no static reduction loop, one term per row and
/// result element, e.g. a bias gradient's column sums): the block's lanes
/// take consecutive elements `e` (lane `l` of every team takes `g * lanes +
/// l`), its teams rows `lo + team, lo + team + teams, ...` below `hi`, so a
/// warp reads consecutive elements of one row (a row-major operand's columns:
/// coalesced, where a block per element reads one column, a cache line per
/// row). The teams' sums are combined keeping team order (block_reduce): the
/// same order on every run. Lanes past the last element (`valid` false) add
/// nothing but reach the reduction. Every team gets its lanes' sums.
static FailureOr<SmallVector<Value>>
columnRowSum(KernelBuilder &kb, RowSum &s, SmallVectorImpl<Value> &idx,
             Value valid, Value lo, Value hi, Value team) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  SmallVector<Value> zeros;
  for (Type t : s.accTypes)
    zeros.push_back(kb.fp(t, 0.0));
  for (int64_t d = s.numParallel; d < (int64_t)s.op.getNumLoops(); ++d)
    if (d != s.rowLoop)
      idx[d] = kb.idx(0); // static loops of extent 1
  Value to = arith::SelectOp::create(b, loc, valid, hi, lo);
  auto loop = scf::ForOp::create(b, loc, kb.add(lo, team), to,
                                 kb.idx(kRowSumBlock / kColumnLanes), zeros);
  // Several rows' loads in flight per thread.
  loop->setAttr(kUnrollAttrName, b.getI64IntegerAttr(4));
  return sumRowLoop(kb, s, idx, loop,
                    [&](Value row) { idx[s.rowLoop] = row; });
}

/// The thread where `storer` holds (one per element) adds the inits once
/// (constant fills, or their values at `idx`) to `sums`, rounds once and
/// stores the results of element `e`.
static LogicalResult storeTotals(KernelBuilder &kb, RowSum &s,
                                 ValueRange sums, SmallVectorImpl<Value> &idx,
                                 Value storer, Value e) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto store = scf::IfOp::create(b, loc, TypeRange{}, storer, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&store.getThenRegion().front());
  for (unsigned i = 0; i < s.op.getNumDpsInits(); ++i) {
    Value total = sums[i];
    OpOperand *init = s.op.getDpsInitOperand(i);
    if (std::optional<double> c = KernelBuilder::fillConstant(init->get())) {
      if (*c != 0.0)
        total = arith::AddFOp::create(b, loc, total, kb.fp(s.accTypes[i], *c));
    } else {
      FailureOr<Value> a =
          kb.access(init->get(), s.op.getMatchingIndexingMap(init), idx, s.op);
      if (failed(a))
        return failure();
      Value v = *a;
      if (v.getType() != s.accTypes[i])
        v = arith::ExtFOp::create(b, loc, s.accTypes[i], v);
      total = arith::AddFOp::create(b, loc, total, v);
    }
    // Rounded once.
    if (total.getType() != s.initTypes[i])
      total = arith::TruncFOp::create(b, loc, s.initTypes[i], total);
    kb.store(total, kb.result(i), e);
  }
  return success();
}

/// Whether every result of `op` is a sum `out + term` over the rows (a
/// diagnostic on `op` when one is not).
static LogicalResult checkRowSums(linalg::GenericOp op) {
  Block &payload = op.getRegion().front();
  unsigned numIn = op.getNumDpsInputs();
  auto yield = cast<linalg::YieldOp>(payload.getTerminator());
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    BlockArgument out = payload.getArgument(numIn + i);
    auto add = yield.getValues()[i].getDefiningOp<arith::AddFOp>();
    if (!add || !out.hasOneUse() ||
        (add.getLhs() != out && add.getRhs() != out))
      return op.emitOpError()
             << "sums over rows of unknown count only as `out + term`, but "
                "result "
             << i << " is not such a sum";
  }
  return success();
}

/// The sum over rows of `op`: its parallel loops, row loop `rowLoop`, the
/// static bounds of the others, and its results' accumulator types (double
/// below 64 bits).
static RowSum rowSumOf(linalg::GenericOp op, int64_t numParallel,
                       int64_t rowLoop, ArrayRef<int64_t> staticBounds) {
  RowSum s;
  s.op = op;
  s.numParallel = numParallel;
  s.rowLoop = rowLoop;
  s.bounds = staticBounds;
  s.count = cast<RankedTensorType>(op->getResult(0).getType()).getNumElements();
  for (int64_t d = numParallel; d < (int64_t)op.getNumLoops(); ++d)
    if (d != rowLoop)
      s.inner *= staticBounds[d];
  for (OpOperand &init : op.getDpsInitsMutable()) {
    s.initTypes.push_back(
        mlir::gnn::arithmeticType(getElementTypeOrSelf(init.get().getType())));
    Type acc = s.initTypes.back();
    if (acc.getIntOrFloatBitWidth() < 64)
      acc = Float64Type::get(op.getContext());
    s.accTypes.push_back(acc);
  }
  return s;
}

/// Opens a `gnnk.for_blocks` over `count` blocks of teams of `lanes`;
/// returns the block, the team and the lane and leaves the builder in its
/// body. (With one lane per team, the team is the thread.)
static std::tuple<Value, Value, Value>
blockMapping(KernelBuilder &kb, Value count, int64_t lanes = 1) {
  OpBuilder &b = kb.b;
  auto blocks = ForBlocksOp::create(b, kb.loc, count, lanes);
  Block *body = new Block();
  blocks.getBody().push_back(body);
  Value blk = body->addArgument(b.getIndexType(), kb.loc);
  Value team = body->addArgument(b.getIndexType(), kb.loc);
  Value lane = body->addArgument(b.getIndexType(), kb.loc);
  b.setInsertionPointToStart(body);
  return {blk, team, lane};
}

/// Whether `v` is 0.
static Value isZero(KernelBuilder &kb, Value v) {
  return arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::eq, v,
                               kb.idx(0));
}

namespace {
/// The kernels of a sum over rows (see lowerRowReduction) and the launch
/// shapes they share: one kernel, or the partial sums of the chunks and the
/// final kernel adding them.
struct RowSumKernels {
  RowSumKernels(KernelGroupOp group, RowSum &s, AffineExpr extent,
                int indexBits);

  /// The one kernel: a block per element (column mode: per group of
  /// elements) over all rows.
  LogicalResult buildSingle();
  /// Stage 1: a block per (element or group, chunk), element fastest (the
  /// blocks of a chunk read the same rows together), into the workspace.
  FailureOr<LaunchOp> buildPartial();
  /// Stage 2: a block per element, the chunks' partials (`partial`'s) in
  /// chunk order.
  LogicalResult buildFinal(LaunchOp partial);

  /// C = min(ceil(rows / minRows), K), the same in both kernels and the
  /// grid, with the rows.
  std::pair<Value, Value> chunksOf(KernelBuilder &kb);
  /// Opens the block mapping of `chunks` chunks of every element (or group)
  /// and sums the rows of chunk `chunk` of `len` rows (the block's one
  /// chunk when `chunks` is null); returns the element, the sums and
  /// whether this thread stores them.
  FailureOr<std::tuple<Value, SmallVector<Value>, Value>>
  sumChunk(KernelBuilder &kb, Value rows, Value chunks,
           SmallVectorImpl<Value> &idx, Value &chunk);

  KernelGroupOp group;
  RowSum &s;
  /// The rows (nodes or edges).
  AffineExpr extent;
  int indexBits;
  MLIRContext *ctx;
  int64_t numResults;
  /// The rows of every result, and the result elements.
  SmallVector<AffineExpr> resultRows;
  AffineExpr count;
  /// Column mode (columnRowSum: no static reduction loop, at least half a
  /// team of elements), and the blocks of one chunk: the elements, or in
  /// column mode their groups of kColumnLanes.
  bool columns;
  int64_t groups;
  /// K (about kRowSumBlocks blocks in all), and the fewest rows of a chunk
  /// (ceil(kRowSumChunkElements / inner); in column mode a team's lanes
  /// walk kColumnLanes elements a row).
  int64_t maxChunks, minRows;
  /// The workspace of the partial sums: count x K x results doubles.
  int64_t slots;
  RankedTensorType workspaceType;
};
} // namespace

RowSumKernels::RowSumKernels(KernelGroupOp group, RowSum &s, AffineExpr extent,
                             int indexBits)
    : group(group), s(s), extent(extent), indexBits(indexBits),
      ctx(s.op.getContext()), numResults(s.op.getNumDpsInits()) {
  auto resultType = cast<RankedTensorType>(s.op->getResult(0).getType());
  AffineExpr rows = getAffineConstantExpr(
      resultType.getRank() ? resultType.getDimSize(0) : 1, ctx);
  resultRows.assign(numResults, rows);
  count = getAffineConstantExpr(s.count, ctx);
  columns = s.inner == 1 && s.count >= kColumnLanes / 2;
  groups = columns ? llvm::divideCeil(s.count, kColumnLanes) : s.count;
  maxChunks = std::max<int64_t>(1, kRowSumBlocks / groups);
  // (Only split sums have chunks, and only when the static loops are not
  // empty.)
  int64_t perRow = columns ? kColumnLanes : s.inner;
  minRows = s.inner ? std::max<int64_t>(
                          1, llvm::divideCeil(kRowSumChunkElements, perRow))
                    : 1;
  slots = s.count * maxChunks * numResults;
  workspaceType = RankedTensorType::get({slots}, Float64Type::get(ctx));
}

std::pair<Value, Value> RowSumKernels::chunksOf(KernelBuilder &kb) {
  Value rows = kb.sizeValue(extent);
  Value byRows = kb.sizeValue(extent.ceilDiv(minRows));
  return std::make_pair(
      rows, arith::MinSIOp::create(kb.b, kb.loc, byRows, kb.idx(maxChunks))
                .getResult());
}

FailureOr<std::tuple<Value, SmallVector<Value>, Value>>
RowSumKernels::sumChunk(KernelBuilder &kb, Value rows, Value chunks,
                        SmallVectorImpl<Value> &idx, Value &chunk) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto [blk, team, lane] =
      blockMapping(kb, chunks ? kb.mul(chunks, groups) : kb.idx(groups),
                   columns ? kColumnLanes : 1);
  Value g = chunks ? kb.rem(blk, groups) : blk;
  chunk = chunks ? kb.div(blk, groups) : kb.idx(0);
  Value lo = kb.idx(0), hi = rows;
  if (chunks) {
    Value len = arith::CeilDivSIOp::create(
        b, loc, rows, arith::MaxSIOp::create(b, loc, chunks, kb.idx(1)));
    lo = arith::MinSIOp::create(b, loc, kb.mul(chunk, len), rows);
    hi = arith::MinSIOp::create(b, loc, kb.add(lo, len), rows);
  }
  if (!columns) {
    idx = elementIndices(kb, s, g);
    FailureOr<SmallVector<Value>> sums = blockRowSum(kb, s, idx, lo, hi, team);
    if (failed(sums))
      return failure();
    return std::make_tuple(g, *sums, isZero(kb, team));
  }
  // Lanes past the last element read the last one's indices, sum no rows
  // and store nothing.
  Value e = kb.add(kb.mul(g, kColumnLanes), lane);
  Value valid = kb.lt(e, kb.idx(s.count));
  e = arith::SelectOp::create(b, loc, valid, e, kb.idx(s.count - 1));
  idx = elementIndices(kb, s, e);
  FailureOr<SmallVector<Value>> sums =
      columnRowSum(kb, s, idx, valid, lo, hi, team);
  if (failed(sums))
    return failure();
  Value storer = arith::AndIOp::create(b, loc, valid, isZero(kb, team));
  return std::make_tuple(e, *sums, storer);
}

LogicalResult RowSumKernels::buildSingle() {
  KernelBuilder kb(group, kernelName(group), kRowSumBlock, indexBits);
  SmallVector<Value> idx;
  Value chunk;
  auto summed = sumChunk(kb, kb.sizeValue(extent), Value(), idx, chunk);
  if (failed(summed))
    return failure();
  auto &[e, sums, storer] = *summed;
  if (failed(storeTotals(kb, s, sums, idx, storer, e)))
    return failure();
  YieldOp::create(kb.b, kb.loc);
  replaceGroup(group, kb.finish(getAffineConstantExpr(groups, ctx), resultRows,
                                graphFor(group)));
  return success();
}

FailureOr<LaunchOp> RowSumKernels::buildPartial() {
  KernelBuilder kb(group, kernelName(group), kRowSumBlock, indexBits);
  kb.setResultTypes(workspaceType);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto [rows, chunks] = chunksOf(kb);
  SmallVector<Value> idx;
  Value chunk;
  auto summed = sumChunk(kb, rows, chunks, idx, chunk);
  if (failed(summed))
    return failure();
  auto &[e, sums, storer] = *summed;
  auto store = scf::IfOp::create(b, loc, TypeRange{}, storer, false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    Value slot = kb.mul(kb.add(kb.mul(chunk, s.count), e), numResults);
    for (int64_t i = 0; i < numResults; ++i)
      kb.store(kb.castFloat(sums[i], Float64Type::get(ctx)), kb.result(0),
               kb.add(slot, kb.idx(i)));
  }
  YieldOp::create(b, loc);
  AffineExpr byRows = extent.ceilDiv(minRows);
  return kb.finish({byRows * groups, getAffineConstantExpr(groups * maxChunks, ctx)},
                   {getAffineConstantExpr(slots, ctx)}, graphFor(group),
                   workspaceType);
}

LogicalResult RowSumKernels::buildFinal(LaunchOp partial) {
  KernelBuilder kb(group, kernelName(group) + "_final", kRowSumBlock,
                   indexBits);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value chunks = chunksOf(kb).second;
  Value workspace = kb.operand(partial.getResult(0));
  auto [e, thread, lane] = blockMapping(kb, kb.idx(s.count));
  (void)lane;
  Value perThread =
      arith::CeilDivSIOp::create(b, loc, chunks, kb.idx(kRowSumBlock));
  Value cLo = arith::MinSIOp::create(b, loc, kb.mul(thread, perThread), chunks);
  Value cHi = arith::MinSIOp::create(b, loc, kb.add(cLo, perThread), chunks);
  SmallVector<Value> zeros;
  for (Type t : s.accTypes)
    zeros.push_back(kb.fp(t, 0.0));
  auto loop = scf::ForOp::create(b, loc, cLo, cHi, kb.idx(1), zeros);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value slot = kb.mul(kb.add(kb.mul(loop.getInductionVar(), s.count), e),
                        numResults);
    SmallVector<Value> next;
    for (int64_t i = 0; i < numResults; ++i) {
      Value part = kb.load(workspace, kb.add(slot, kb.idx(i)))[0];
      next.push_back(arith::AddFOp::create(b, loc, loop.getRegionIterArgs()[i],
                                           kb.castFloat(part, s.accTypes[i])));
    }
    scf::YieldOp::create(b, loc, next);
  }
  SmallVector<Value> totals = blockSum(kb, loop.getResults(), s.accTypes);
  SmallVector<Value> idx = elementIndices(kb, s, e);
  if (failed(storeTotals(kb, s, totals, idx, isZero(kb, thread), e)))
    return failure();
  YieldOp::create(b, loc);
  replaceGroup(group, kb.finish(count, resultRows, graphFor(group)));
  return success();
}

/// A sum over all rows (nodes or edges) into a small static result, e.g. a
/// bias or weight gradient, GIN's eps or AGNN's beta gradient. Every result
/// must be a sum: the body yields `out + term`. The sums run in double and
/// are rounded once at the end (a float sum over a million rows lost up to
/// 1.5e-3 on weight gradients whose terms cancel, qm9 and ego-twitter
/// against the reference); the inits are added once. Within a block the
/// rows and the static reduction loops inside them are one flattened index,
/// walked by the threads in turn (coalesced along a row), then a block
/// reduction keeping thread order: deterministic, no atomics.
///
/// With K = floor(kRowSumBlocks / count) chunks at most (count: result
/// elements), K >= 2 splits the rows in two kernels:
///  - `<name>`, a block per (element, chunk): C = min(ceil(rows /
///    ceil(kRowSumChunkElements / inner)), K) chunks (inner: elements per row
///    in the static loops) of ceil(rows / C) rows, the block's sums (double)
///    stored in a workspace of count x K x results doubles (a static size,
///    at most 8 KiB a result outside column mode), [chunk][element][result];
///  - `<name>_final`, a block per element: thread t adds chunks [t q, (t + 1)
///    q) in order (q = ceil(C / block)), a block reduction keeping thread order,
///    the inits, one rounding.
/// C depends only on the row count (nodes or edges), so the results are the
/// same on every GPU and every run. With K = 1 (count >= kRowSumBlocks / 2,
/// enough blocks already) one kernel, a block per element over all rows.
/// Both kernels run even when C is 1 (a small graph): C is known only at
/// run time, and the final kernel is one short block per element.
///
/// Column mode (no static reduction loop and at least 16 elements, e.g. a
/// bias gradient): a block takes a group of kColumnLanes consecutive
/// elements instead of one (columnRowSum), K = floor(kRowSumBlocks / groups)
/// and chunks of at least kRowSumChunkElements / kColumnLanes rows; the
/// workspace then holds up to kRowSumBlocks x kColumnLanes doubles a result
/// (256 KiB).
static LogicalResult
lowerRowReduction(KernelGroupOp group, linalg::GenericOp op,
                  int64_t numParallel, int64_t rowLoop, AffineExpr extent,
                  ArrayRef<int64_t> staticBounds, int indexBits) {
  if (failed(checkRowSums(op)))
    return failure();
  RowSum s = rowSumOf(op, numParallel, rowLoop, staticBounds);
  RowSumKernels kernels(group, s, extent, indexBits);
  if (kernels.maxChunks == 1 || s.inner == 0)
    return kernels.buildSingle();
  FailureOr<LaunchOp> partial = kernels.buildPartial();
  if (failed(partial))
    return failure();
  return kernels.buildFinal(*partial);
}

/// The parallel loops that lead `op`'s loops (a diagnostic when a loop
/// after them is not a reduction).
static FailureOr<int64_t> leadingParallelLoops(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  int64_t numParallel = 0;
  while (numParallel < (int64_t)iters.size() &&
         iters[numParallel] == utils::IteratorType::parallel)
    ++numParallel;
  for (int64_t d = numParallel; d < (int64_t)iters.size(); ++d)
    if (iters[d] != utils::IteratorType::reduction)
      return op->emitOpError("expects parallel loops before reduction loops "
                             "in the CUDA backend");
  return numParallel;
}

/// The map indexing every output of `op`: its first `numParallel` loops in
/// order, with possibly constant 0s on size-1 dimensions between them (a
/// broadcast operand's gradient, e.g. [N, 1]), one map for all outputs (a
/// diagnostic otherwise).
static FailureOr<AffineMap> outputMap(linalg::LinalgOp op,
                                      int64_t numParallel) {
  MLIRContext *ctx = op->getContext();
  AffineMap outMap =
      AffineMap::get(op.getNumLoops(), 0,
                     llvm::to_vector(llvm::map_range(
                         llvm::seq<int64_t>(0, numParallel),
                         [&](int64_t d) { return getAffineDimExpr(d, ctx); })),
                     ctx);
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (map == outMap)
      continue;
    SmallVector<AffineExpr> loops;
    bool scalarDims = true;
    for (auto [r, e] : llvm::enumerate(map.getResults())) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (c && c.getValue() == 0 &&
          cast<RankedTensorType>(init.get().getType()).getDimSize(r) == 1)
        continue;
      scalarDims &= isa<AffineDimExpr>(e);
      loops.push_back(e);
    }
    if (!scalarDims || AffineMap::get(op.getNumLoops(), 0, loops, ctx) !=
                           AffineMap::get(op.getNumLoops(), 0,
                                          outMap.getResults(), ctx))
      return op->emitOpError("expects every output indexed by the parallel "
                             "loops in order in the CUDA backend");
  }
  AffineMap firstOut = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (OpOperand &init : op.getDpsInitsMutable())
    if (op.getMatchingIndexingMap(&init) != firstOut)
      return op->emitOpError("expects every output indexed by the parallel "
                             "loops in order in the CUDA backend");
  return firstOut;
}

/// The static bound of each loop of `op` (-1 where unknown): the parallel
/// loops after the first from the output (indexed by `outMap`), the
/// reduction loops from the static dimensions of any operand they index.
static SmallVector<int64_t> loopBounds(linalg::LinalgOp op, AffineMap outMap,
                                       int64_t numParallel) {
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> bounds(op.getNumLoops(), -1);
  for (auto [r, e] : llvm::enumerate(outMap.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(e); d && r > 0)
      bounds[d.getPosition()] = outType.getDimSize(r);
  for (OpOperand &operand : op->getOpOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!t)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [r, e] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(e))
        if (d.getPosition() >= (unsigned)numParallel &&
            bounds[d.getPosition()] < 0 &&
            !ShapedType::isDynamic(t.getDimSize(r)))
          bounds[d.getPosition()] = t.getDimSize(r);
  }
  return bounds;
}

LogicalResult mlir::gnnk::lowerElementwise(KernelGroupOp group,
                                           GroupParts &parts, int indexBits) {
  auto op = cast<linalg::LinalgOp>(parts.anchor);
  auto generic = dyn_cast<linalg::GenericOp>(parts.anchor);
  if (!generic)
    return op->emitOpError("is not supported by the CUDA backend (only "
                           "linalg.generic outside matmuls and fills)");
  FailureOr<int64_t> numParallelOr = leadingParallelLoops(op);
  if (failed(numParallelOr))
    return failure();
  int64_t numParallel = *numParallelOr;
  FailureOr<AffineMap> firstOutOr = outputMap(op, numParallel);
  if (failed(firstOutOr))
    return failure();
  AffineMap firstOut = *firstOutOr;
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> bounds = loopBounds(op, firstOut, numParallel);
  SmallVector<int64_t> dynamicLoops;
  for (int64_t d = numParallel; d < (int64_t)bounds.size(); ++d)
    if (bounds[d] < 0)
      dynamicLoops.push_back(d);
  if (!dynamicLoops.empty()) {
    FailureOr<AffineExpr> extent =
        dynamicLoops.size() == 1 && outType.hasStaticShape()
            ? reductionExtent(op, dynamicLoops.front())
            : FailureOr<AffineExpr>(failure());
    if (failed(extent))
      return op->emitOpError() << "has a reduction loop d"
                               << dynamicLoops.front()
                               << " of unknown static size";
    return lowerRowReduction(group, generic, numParallel,
                             dynamicLoops.front(), *extent, bounds, indexBits);
  }
  FailureOr<AffineExpr> rows = resultRows(group);
  FailureOr<int64_t> perRowOr = rowElements(op->getResult(0), op);
  if (failed(rows) || failed(perRowOr))
    return failure();
  int64_t perRow = *perRowOr;
  int64_t block = group.getScheduleAttr().getBlock();
  KernelBuilder kb(group, kernelName(group), block, indexBits);
  OpBuilder &b = kb.b;
  Value total = kb.sizeValue(*rows * perRow);
  auto map = ForElementsOp::create(b, kb.loc, total);
  Block *body = new Block();
  map.getBody().push_back(body);
  Value t = body->addArgument(b.getIndexType(), kb.loc);
  b.setInsertionPointToStart(body);
  // The loop indices of element t of the output: through its map, the
  // leading dimension t / perRow, the others (t / stride) % size.
  SmallVector<Value> idx(op.getNumLoops());
  int64_t stride = perRow;
  for (auto [r, e] : llvm::enumerate(firstOut.getResults())) {
    if (r > 0)
      stride /= outType.getDimSize(r);
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      continue;
    idx[d.getPosition()] =
        r == 0 ? kb.div(t, perRow)
               : kb.rem(kb.div(t, stride), outType.getDimSize(r));
  }
  // The accumulators start from the inits: constant fills, or their values.
  Block &payload = generic.getRegion().front();
  SmallVector<Value> starts;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value start = kb.fp(getElementTypeOrSelf(init.get().getType()), 0.0);
    if (!payload.getArgument(init.getOperandNumber()).use_empty()) {
      FailureOr<Value> a =
          kb.access(init.get(), op.getMatchingIndexingMap(&init), idx, op);
      if (failed(a))
        return failure();
      start = *a;
    }
    starts.push_back(start);
  }
  FailureOr<SmallVector<Value>> values =
      nestReductions(kb, generic, idx, bounds, numParallel, -1, starts);
  if (failed(values))
    return failure();
  for (auto [i, v] : llvm::enumerate(*values))
    kb.store(v, kb.result(i), t);
  YieldOp::create(b, kb.loc);
  SmallVector<AffineExpr> resultRowsList(group.getNumResults(), *rows);
  replaceGroup(group, kb.finish(gridFor(*rows * perRow, block), resultRowsList,
                                graphFor(group)));
  return success();
}

//===----------------------------------------------------------------------===//
// Degree
//===----------------------------------------------------------------------===//

LogicalResult mlir::gnnk::lowerDegree(KernelGroupOp group, GroupParts &parts,
                                      int indexBits) {
  if (!parts.producers.empty())
    return group.emitOpError("expects nothing before a degree");
  auto op = cast<gnn::DegreeOp>(parts.anchor);
  int64_t block = group.getScheduleAttr().getBlock();
  KernelBuilder kb(group, kernelName(group), block, indexBits);
  OpBuilder &b = kb.b;
  MLIRContext *ctx = group.getContext();
  RowSpace rowSpace = traversalRows(op.getGraph(), op.getReversed());
  AffineExpr nodes = rowSpace.expr(ctx);
  auto map = ForElementsOp::create(b, kb.loc, kb.size(rowSpace.name));
  Block *body = new Block();
  map.getBody().push_back(body);
  Value i = body->addArgument(b.getIndexType(), kb.loc);
  b.setInsertionPointToStart(body);
  Value ptr = kb.graph(op.getReversed() ? "csc_col_ptr" : "csr_row_ptr");
  Value d = kb.sub(kb.loadIndex(ptr, kb.add(i, kb.idx(1))), kb.loadIndex(ptr, i));
  Value di = arith::IndexCastOp::create(b, kb.loc, b.getI64Type(), d);
  Value f = arith::SIToFPOp::create(b, kb.loc, kb.ft, di);
  FailureOr<Value> v =
      kb.applyConsumers(parts.consumers, op.getResult(), f, i, kb.idx(0));
  if (failed(v))
    return failure();
  kb.store(*v, kb.result(0), i);
  YieldOp::create(b, kb.loc);
  replaceGroup(group, kb.finish(gridFor(nodes, block), {nodes}, parts.graph));
  return success();
}

//===----------------------------------------------------------------------===//
// Edge maps: gather and sddmm, a team per element of the edge result
//===----------------------------------------------------------------------===//

LogicalResult mlir::gnnk::lowerEdgeMap(KernelGroupOp group, GroupParts &parts,
                                       int indexBits) {
  // The group's edge DAG (gathers, sddmms, elementwise ops on their values
  // and absorbed consumers) is evaluated per element of its result, by a
  // team of `lanes` threads that split its sddmms' dot products (one thread
  // when lanes = 1). Without an sddmm (a gather's group, lanes = 1) a
  // thread takes a run of the schedule's `vector` consecutive elements of
  // a row instead: the gathered rows and edge tensors read as one vector
  // access each (prefetchRun), the run stored as one, and the edge's
  // indices loaded once for the run. The same arithmetic per element.
  Value value = group.getYield().getValues()[0];
  Operation *op = value.getDefiningOp();
  FailureOr<int64_t> rowOr = rowElements(value, op);
  if (failed(rowOr))
    return failure();
  int64_t row = *rowOr;
  gnn::ScheduleAttr s = group.getScheduleAttr();
  int64_t block = s.getBlock(), lanes = s.getLanes();
  bool dots = false;
  group.getBody().walk([&](gnn::SddmmOp) { dots = true; });
  int64_t vec = !dots && lanes == 1 && row % s.getVector() == 0
                    ? s.getVector()
                    : 1;
  KernelBuilder kb(group, kernelName(group), block, indexBits);
  OpBuilder &b = kb.b;
  AffineExpr edges = getAffineSymbolExpr(1, group.getContext());
  Value count = kb.sizeValue(edges * (row / vec));
  Value t, lane;
  if (lanes > 1) {
    std::tie(t, lane) = rowMapping(kb, count, lanes);
  } else {
    auto map = ForElementsOp::create(b, kb.loc, count);
    Block *body = new Block();
    map.getBody().push_back(body);
    t = body->addArgument(b.getIndexType(), kb.loc);
    b.setInsertionPointToStart(body);
  }
  Value i = kb.div(t, row / vec), k = kb.mul(kb.rem(t, row / vec), vec);
  EdgeRef e{i, kb.loadIndex(kb.graph("csr_col"), i),
            kb.loadIndex(kb.graph("csr_dst"), i)};
  EdgeEvaluator eval(kb, group);
  eval.distributeDots(lane, lanes, s.getVector());
  // (A run of one element: prefetchRun loads nothing, and elementAt at its
  // indices is `element`.)
  SmallVector<SmallVector<Value>> at =
      runIndices(kb, cast<RankedTensorType>(value.getType()), k, vec);
  if (failed(eval.prefetchRun(value, e, at)))
    return failure();
  SmallVector<Value> values;
  for (ArrayRef<Value> idx : at) {
    FailureOr<Value> v = eval.elementAt(value, e, idx);
    if (failed(v))
      return failure();
    values.push_back(*v);
  }
  {
    // Every lane of a team holds the element; the first stores it.
    OpBuilder::InsertionGuard guard(b);
    if (lanes > 1) {
      Value first = arith::CmpIOp::create(b, kb.loc, arith::CmpIPredicate::eq,
                                          lane, kb.idx(0));
      auto ifOp = scf::IfOp::create(b, kb.loc, TypeRange{}, first, false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    kb.store(values, kb.result(0), kb.mul(t, vec)); // (i row + k)
  }
  YieldOp::create(b, kb.loc);
  replaceGroup(group, kb.finish(gridFor(edges * (row / vec) * lanes, block),
                                {edges}, parts.graph));
  return success();
}

//===----------------------------------------------------------------------===//
// Relation sums: a relation reduce, a thread per element of its edge values
//===----------------------------------------------------------------------===//

LogicalResult mlir::gnnk::lowerRelationSum(KernelGroupOp group,
                                           GroupParts &parts, int indexBits) {
  // The group's edge DAG is evaluated per element of the reduce's edge
  // values (as an edge map's), and each element is added into row
  // (node, type(e)) of the result, zeroed before the launch: the additions
  // of one (node, relation) pair meet in any order (gnnk.atomic_add). A
  // bf16 or f16 result is summed into an f32 workspace of its shape, then
  // rounded once by a second kernel (`<name>_final`): atomic additions in
  // the storage type would round every term.
  auto reduce = cast<gnn::ReduceOp>(parts.anchor);
  if (!parts.consumers.empty() || parts.winner)
    return reduce.emitOpError("expects nothing after a relation reduce in "
                              "its kernel group (its result is added into "
                              "edge by edge)");
  RankedTensorType resultType = reduce.getResult().getType();
  Type element = resultType.getElementType();
  bool narrow = mlir::gnn::isStorageFloatType(element);
  Type sumType = mlir::gnn::arithmeticType(element);
  auto sumTensor = RankedTensorType::get(resultType.getShape(), sumType);
  Value value = reduce.getInput();
  FailureOr<int64_t> rowOr = rowElements(value, reduce);
  if (failed(rowOr))
    return failure();
  int64_t row = *rowOr;
  int64_t relations = resultType.getDimSize(1);
  int64_t block = group.getScheduleAttr().getBlock();
  KernelBuilder kb(group, kernelName(group), block, indexBits);
  if (narrow)
    kb.setResultTypes(TypeRange{sumTensor});
  OpBuilder &b = kb.b;
  MLIRContext *ctx = group.getContext();
  AffineExpr edges = getAffineSymbolExpr(1, ctx);
  auto map = ForElementsOp::create(b, kb.loc, kb.sizeValue(edges * row));
  Block *body = new Block();
  map.getBody().push_back(body);
  Value t = body->addArgument(b.getIndexType(), kb.loc);
  b.setInsertionPointToStart(body);
  Value i = kb.div(t, row), k = kb.rem(t, row);
  EdgeRef e{i, kb.loadIndex(kb.graph("csr_col"), i),
            kb.loadIndex(kb.graph("csr_dst"), i)};
  EdgeEvaluator eval(kb, group);
  FailureOr<Value> v = eval.element(value, e, k);
  if (failed(v))
    return failure();
  Value node = reduce.getReversed() ? e.src : e.dst;
  Value at = kb.add(kb.mul(relationRow(kb, node, relations, i), row), k);
  Value out = kb.accumulatedResult(0);
  AtomicAddOp::create(b, kb.loc, kb.castFloat(*v, sumType), out, at);
  YieldOp::create(b, kb.loc);
  RowSpace rows = traversalRows(parts.graph, reduce.getReversed());
  AffineExpr grid = gridFor(edges * row, block);
  if (!narrow) {
    replaceGroup(group, kb.finish(grid, {rows.expr(ctx)}, parts.graph));
    return success();
  }
  LaunchOp sums = kb.finish(ArrayRef<AffineExpr>{grid}, {rows.expr(ctx)},
                            parts.graph, TypeRange{sumTensor});
  // Each element of the f32 sums rounded into the result.
  int64_t perRow = row * relations;
  KernelBuilder kf(group, kernelName(group) + "_final", block, indexBits);
  OpBuilder &fb = kf.b;
  AffineExpr count = rows.expr(ctx) * perRow;
  auto each = ForElementsOp::create(fb, kf.loc, kf.sizeValue(count));
  Block *fbody = new Block();
  each.getBody().push_back(fbody);
  Value j = fbody->addArgument(fb.getIndexType(), kf.loc);
  fb.setInsertionPointToStart(fbody);
  Value sum = kf.load(kf.operand(sums.getResult(0)), j)[0];
  kf.store(sum, kf.result(0), j);
  YieldOp::create(fb, kf.loc);
  replaceGroup(group,
               kf.finish(gridFor(count, block), {rows.expr(ctx)}, parts.graph));
  return success();
}

void mlir::gnnk::populateEdgeMapLoweringPatterns(RewritePatternSet &patterns,
                                                 int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::edge_map,
      gnn::Mapping::edge_parallel, lowerEdgeMap, indexBits);
}

void mlir::gnnk::populateDegreeLoweringPatterns(RewritePatternSet &patterns,
                                                int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::degree,
      gnn::Mapping::element_parallel, lowerDegree, indexBits);
}

void mlir::gnnk::populateElementwiseLoweringPatterns(
    RewritePatternSet &patterns, int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::elementwise,
      gnn::Mapping::element_parallel, lowerElementwise, indexBits);
}
