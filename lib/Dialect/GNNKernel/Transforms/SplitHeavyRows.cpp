//===- SplitHeavyRows.cpp - heavy rows spread over the GPU ----------------===//
//
// Part of gnnc. See the pass description (Passes.td). A row kernel
//
//   gnnk.for_rows %n lanes L (%row, %lane) {
//     <prologue: %begin = ptr[%row], %end = ptr[%row + 1], ...>
//     %r = gnnk.for_edges (%begin + %g) to %end step %s ... merge {...}
//     [%t = gnnk.team_reduce %r ...]
//     <epilogue: stores>
//   }
//
// keeps its light rows (the loop and epilogue under `end - begin <= N`) and
// gains `<name>_partial` (a block per chunk of N positions: for the heavy
// row of the chunk's first position and a heavy row starting inside it, the
// teams share the chunk's edges, team and block reductions use the loop's
// merge region, one partial state per (chunk, which) is written) and
// `<name>_final` (per heavy row, the partial states of its chunks merged in
// chunk order, then the epilogue), launched after it and updating its
// result in place.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace gnnk {
#define GEN_PASS_DEF_GNNSPLITHEAVYROWS
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h.inc"
} // namespace gnnk
} // namespace mlir

using namespace mlir;
using namespace mlir::gnnk;

namespace {

/// The pieces of a splittable row kernel.
struct RowKernel {
  ForRowsOp rows;
  ForEdgesOp loop;
  TeamReduceOp teamReduce; ///< may be null
  Value begin, end, offset; ///< loop start = begin + offset
  bool reversed = false;
  int64_t lanes = 0;
};

/// The graph-array name of a kernel parameter, if it is one.
StringRef graphName(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return "";
  auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp());
  if (!kernel)
    return "";
  DictionaryAttr attrs = kernel.getArgAttrDict(arg.getArgNumber());
  auto name = attrs ? attrs.getAs<StringAttr>(KernelOp::kGraph) : StringAttr();
  return name ? name.getValue() : "";
}

/// `index_cast(load ptr[...])` with ptr a row-pointer array: the array.
Value rowPointerLoad(Value v) {
  auto cast = v.getDefiningOp<arith::IndexCastOp>();
  auto load = cast ? cast.getIn().getDefiningOp<LoadOp>() : LoadOp();
  if (!load)
    return Value();
  StringRef name = graphName(load.getBuffer());
  return name == "csr_row_ptr" || name == "csc_col_ptr" ? load.getBuffer()
                                                        : Value();
}

FailureOr<RowKernel> analyse(KernelOp kernel) {
  RowKernel k;
  auto fail = [&](const Twine &why) {
    return kernel.emitOpError() << "cannot split heavy rows: " << why;
  };
  for (Operation &op : kernel.getBody().front())
    if (auto rows = dyn_cast<ForRowsOp>(op)) {
      if (k.rows)
        return fail("expects one gnnk.for_rows");
      k.rows = rows;
    }
  if (!k.rows)
    return fail("expects a gnnk.for_rows");
  k.lanes = k.rows.getLanes();
  Block &body = k.rows.getBody().front();
  for (Operation &op : body)
    if (auto loop = dyn_cast<ForEdgesOp>(op)) {
      if (k.loop)
        return fail("expects one gnnk.for_edges directly in the row");
      k.loop = loop;
    }
  if (!k.loop)
    return fail("expects a gnnk.for_edges directly in the row");
  if (k.loop.getMerge().empty())
    return fail("expects the edge loop to have a merge region");
  auto start = k.loop.getBegin().getDefiningOp<arith::AddIOp>();
  if (!start || !rowPointerLoad(start.getLhs()) || !rowPointerLoad(k.loop.getEnd()))
    return fail("expects the edge loop to run from the row's start (plus a "
                "lane offset) to the row's end");
  k.begin = start.getLhs();
  k.offset = start.getRhs();
  k.end = k.loop.getEnd();
  k.reversed = graphName(rowPointerLoad(k.end)) == "csc_col_ptr";
  if (Operation *next = k.loop->getNextNode())
    if (auto red = dyn_cast<TeamReduceOp>(next))
      if (red.getValues() == k.loop.getResults())
        k.teamReduce = red;
  return k;
}

/// Appends a parameter to `kernel`.
BlockArgument addParam(KernelOp kernel, Type type, NamedAttribute binding) {
  Block &entry = kernel.getBody().front();
  BlockArgument arg = entry.addArgument(type, kernel.getLoc());
  SmallVector<Attribute> attrs;
  if (ArrayAttr old = kernel.getArgAttrsAttr())
    attrs.assign(old.begin(), old.end());
  attrs.resize(entry.getNumArguments() - 1,
               DictionaryAttr::get(kernel.getContext()));
  NamedAttrList list;
  list.push_back(binding);
  attrs.push_back(list.getDictionary(kernel.getContext()));
  kernel.setArgAttrsAttr(ArrayAttr::get(kernel.getContext(), attrs));
  kernel.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
      kernel.getContext(), entry.getArgumentTypes(), {})));
  return arg;
}

/// The existing parameter of `kernel` bound to (`key`, `value`), or a new
/// one of `type`.
Value param(KernelOp kernel, StringRef key, Attribute value, Type type) {
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    if (DictionaryAttr a = kernel.getArgAttrDict(i))
      if (a.get(key) == value)
        return kernel.getArgument(i);
  OpBuilder b(kernel.getContext());
  return addParam(kernel, type, b.getNamedAttr(key, value));
}

/// Removes the parameters bound to launch results (the partial kernel
/// writes only its partial states).
void dropResultParams(KernelOp kernel, Value keep) {
  Block &entry = kernel.getBody().front();
  SmallVector<Attribute> attrs(kernel.getArgAttrsAttr().begin(),
                               kernel.getArgAttrsAttr().end());
  for (int i = entry.getNumArguments() - 1; i >= 0; --i) {
    auto a = cast<DictionaryAttr>(attrs[i]);
    if (!a.get(KernelOp::kResult) || entry.getArgument(i) == keep)
      continue;
    assert(entry.getArgument(i).use_empty() && "result params are unused");
    entry.eraseArgument(i);
    attrs.erase(attrs.begin() + i);
  }
  kernel.setArgAttrsAttr(ArrayAttr::get(kernel.getContext(), attrs));
  kernel.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
      kernel.getContext(), entry.getArgumentTypes(), {})));
}

/// Builder helpers over index values.
struct Ix {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value load(Value array, Value pos) {
    Type t = cast<MemRefType>(array.getType()).getElementType();
    Value v = LoadOp::create(b, loc, TypeRange{t}, array, pos).getResult(0);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
};

/// Where the partial state of (chunk, which) for `lane` starts: states are
/// [chunk][which][lane][value].
Value stateIndex(Ix &ix, Value chunk, Value which, int64_t lanes, Value lane,
                 size_t values) {
  Value slot = ix.add(ix.mul(chunk, ix.c(2)), which);
  return ix.mul(ix.add(ix.mul(slot, ix.c(lanes)), lane), ix.c(values));
}

/// Clones the row prologue (the row body's ops before the edge loop) for
/// `row` and `lane`; the mapping gives the clones of its values.
IRMapping cloneRowPrologue(OpBuilder &b, RowKernel &k, Value row,
                           Value lane) {
  IRMapping map;
  Block &body = k.rows.getBody().front();
  map.map(body.getArgument(0), row);
  map.map(body.getArgument(1), lane);
  for (Operation &op : body) {
    if (&op == k.loop.getOperation())
      break;
    b.clone(op, map);
  }
  return map;
}

/// Inlines a two-sided region (merge/combine) on `a` and `c`.
SmallVector<Value> inlineMerge(OpBuilder &b, Region &region, ValueRange a,
                               ValueRange c) {
  IRMapping map;
  Block &block = region.front();
  unsigned n = a.size();
  for (unsigned i = 0; i < n; ++i) {
    map.map(block.getArgument(i), a[i]);
    map.map(block.getArgument(n + i), c[i]);
  }
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  SmallVector<Value> out;
  for (Value v : block.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

/// Replaces the kernel's for_rows by a for_blocks over the chunks of `split`
/// positions; returns (chunk lo, chunk hi, team, lane, row-of-position fn)
/// with the builder inside the new mapping.
struct ChunkMapping {
  Value blk, team, lane, lo, hi;
};

ChunkMapping chunkMapping(KernelOp kernel, const RowKernel &k, int64_t split,
                          OpBuilder &b) {
  Location loc = kernel.getLoc();
  Value edgesParam = param(kernel, KernelOp::kSize, b.getStringAttr("edges"),
                           b.getI64Type());
  b.setInsertionPoint(k.rows);
  Ix ix{b, loc};
  Value edges = arith::IndexCastOp::create(b, loc, b.getIndexType(), edgesParam);
  Value n = ix.c(split);
  Value chunks = arith::CeilDivSIOp::create(b, loc, edges, n);
  auto blocks = ForBlocksOp::create(b, loc, chunks, k.lanes);
  Block *body = new Block();
  blocks.getBody().push_back(body);
  ChunkMapping m;
  m.blk = body->addArgument(b.getIndexType(), loc);
  m.team = body->addArgument(b.getIndexType(), loc);
  m.lane = body->addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(body);
  m.lo = ix.mul(m.blk, n);
  m.hi = ix.min(ix.add(m.lo, n), edges);
  YieldOp::create(b, loc);
  b.setInsertionPoint(body->getTerminator());
  return m;
}

/// The row (destination, or source when reversed) of traversal position p.
Value rowOfPosition(KernelOp kernel, const RowKernel &k, OpBuilder &b,
                    Value p) {
  Ix ix{b, kernel.getLoc()};
  Type idx = cast<MemRefType>(rowPointerLoad(k.end).getType());
  if (!k.reversed)
    return ix.load(param(kernel, KernelOp::kGraph, b.getStringAttr("csr_dst"), idx), p);
  Value slot = ix.load(param(kernel, KernelOp::kGraph, b.getStringAttr("csc_to_csr"), idx), p);
  return ix.load(param(kernel, KernelOp::kGraph, b.getStringAttr("csr_col"), idx), slot);
}

/// Carried values as f32 for the partial-state buffer, and back.
Value toF32(OpBuilder &b, Location loc, Value v) {
  return v.getType().isF32() ? v
                             : arith::TruncFOp::create(b, loc, b.getF32Type(), v)
                                   .getResult();
}
Value fromF32(OpBuilder &b, Location loc, Value v, Type t) {
  return t.isF32() ? v : arith::ExtFOp::create(b, loc, t, v).getResult();
}

struct SplitHeavyRows
    : public mlir::gnnk::impl::GNNSplitHeavyRowsBase<SplitHeavyRows> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels;
    for (auto kernel : module.getOps<KernelOp>())
      if (kernel->hasAttr(kSplitAttr))
        kernels.push_back(kernel);
    for (KernelOp kernel : kernels)
      if (failed(split(kernel)))
        return signalPassFailure();
  }

  LogicalResult split(KernelOp kernel) {
    int64_t n = cast<IntegerAttr>(kernel->getAttr(kSplitAttr)).getInt();
    kernel->removeAttr(kSplitAttr);
    if (n < 1)
      return kernel.emitOpError() << "expects gnnk.split >= 1 but got " << n;
    FailureOr<RowKernel> k = analyse(kernel);
    if (failed(k))
      return failure();
    SmallVector<LaunchOp> launches;
    getOperation().walk([&](LaunchOp l) {
      if (l.getKernel() == kernel.getSymName())
        launches.push_back(l);
    });
    OpBuilder mb(kernel.getContext());
    mb.setInsertionPointAfter(kernel);
    auto partial = cast<KernelOp>(mb.clone(*kernel));
    partial.setSymName((kernel.getSymName() + "_partial").str());
    mb.setInsertionPointAfter(partial);
    auto final = cast<KernelOp>(mb.clone(*kernel));
    final.setSymName((kernel.getSymName() + "_final").str());
    unsigned numOperands = 0;
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (DictionaryAttr a = kernel.getArgAttrDict(i))
        numOperands += a.get(KernelOp::kOperand) != nullptr;
    TypeRange carried = k->loop.getResultTypes();
    int64_t stateSize = k->lanes * carried.size();
    if (failed(buildPartial(partial, n)) ||
        failed(buildFinal(final, n, numOperands)))
      return failure();
    // A block per chunk of positions.
    AffineExpr chunks = getAffineSymbolExpr(1, kernel.getContext()).ceilDiv(n);
    partial.setGridAttr(AffineMapAttr::get(sizeMap(chunks)));
    final.setGridAttr(AffineMapAttr::get(sizeMap(chunks)));
    guardLightRows(*k, n);
    // Launches: partial states, then the final kernel updating the result.
    MLIRContext *ctx = kernel.getContext();
    AffineExpr edges = getAffineSymbolExpr(1, ctx);
    for (LaunchOp l : launches) {
      OpBuilder hb(l);
      hb.setInsertionPointAfter(l);
      auto stateType = RankedTensorType::get({ShapedType::kDynamic},
                                             Float32Type::get(ctx));
      AffineExpr stateRows = edges.ceilDiv(n) * (2 * stateSize);
      auto p = LaunchOp::create(
          hb, l.getLoc(), TypeRange{stateType},
          FlatSymbolRefAttr::get(partial.getSymNameAttr()), l.getGraph(),
          l.getArgs(), hb.getArrayAttr({AffineMapAttr::get(sizeMap(stateRows))}),
          DenseI64ArrayAttr());
      SmallVector<Value> args(l.getArgs());
      args.push_back(p.getResult(0));
      SmallVector<int64_t> tied;
      for (Value r : l.getResults()) {
        tied.push_back(args.size());
        args.push_back(r);
      }
      auto f = LaunchOp::create(
          hb, l.getLoc(), l.getResultTypes(),
          FlatSymbolRefAttr::get(final.getSymNameAttr()), l.getGraph(), args,
          l.getRows(), hb.getDenseI64ArrayAttr(tied));
      for (auto [old, updated] : llvm::zip(l.getResults(), f.getResults()))
        old.replaceUsesWithIf(updated, [&](OpOperand &use) {
          return use.getOwner() != f.getOperation();
        });
    }
    return success();
  }

  /// The row kernel skips heavy rows.
  void guardLightRows(RowKernel &k, int64_t n) {
    OpBuilder b(k.loop);
    Location loc = k.loop.getLoc();
    Ix ix{b, loc};
    Value light = ix.cmp(arith::CmpIPredicate::sle, ix.sub(k.end, k.begin),
                         ix.c(n));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, light, false);
    Block *then = &ifOp.getThenRegion().front();
    Block &body = k.rows.getBody().front();
    SmallVector<Operation *> move;
    for (Operation *op = k.loop; op != body.getTerminator(); op = op->getNextNode())
      move.push_back(op);
    for (Operation *op : move)
      op->moveBefore(then->getTerminator());
  }

  LogicalResult buildPartial(KernelOp kernel, int64_t n) {
    FailureOr<RowKernel> k = analyse(kernel);
    if (failed(k))
      return failure();
    OpBuilder b(kernel.getContext());
    Location loc = kernel.getLoc();
    ChunkMapping m = chunkMapping(kernel, *k, n, b);
    Value states = addParam(
        kernel, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()),
        b.getNamedAttr(KernelOp::kResult, b.getI64IntegerAttr(0)));
    Ix ix{b, loc};
    Value rowLo = rowOfPosition(kernel, *k, b, m.lo);
    int64_t teams = kernel.getBlock() / k->lanes;
    // which = 0: the row of the chunk's first position; 1: a row starting
    // inside the chunk (it must reach the chunk's end to be heavy).
    for (int which = 0; which < 2; ++which) {
      Value pos = which == 0 ? m.lo : ix.sub(m.hi, ix.c(1));
      Value row = rowOfPosition(kernel, *k, b, pos);
      IRMapping map = cloneRowPrologue(b, *k, row, m.lane);
      Value begin = map.lookup(k->begin), end = map.lookup(k->end);
      Value heavy = ix.cmp(arith::CmpIPredicate::sgt, ix.sub(end, begin), ix.c(n));
      if (which == 1) {
        Value startsInside = arith::AndIOp::create(
            b, loc, ix.cmp(arith::CmpIPredicate::sgt, begin, m.lo),
            ix.cmp(arith::CmpIPredicate::ne, rowLo, row));
        heavy = arith::AndIOp::create(b, loc, heavy, startsInside);
      }
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, heavy, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value from = ix.max(begin, m.lo), to = ix.min(end, m.hi);
      Value step = map.lookup(k->loop.getStep());
      Value first = ix.add(ix.add(from, ix.mul(m.team, step)),
                           map.lookup(k->offset));
      Value blockStep = ix.mul(step, ix.c(teams));
      IRMapping loopMap = map;
      auto loop = cast<ForEdgesOp>(b.clone(*k->loop, loopMap));
      loop.getBeginMutable().assign(first);
      loop.getEndMutable().assign(to);
      loop.getStepMutable().assign(blockStep);
      SmallVector<Value> state(loop.getResults());
      if (k->teamReduce) {
        IRMapping redMap = map;
        for (auto [o, v] : llvm::zip(k->loop.getResults(), loop.getResults()))
          redMap.map(o, v);
        auto red = cast<TeamReduceOp>(b.clone(*k->teamReduce, redMap));
        state.assign(red.getResults().begin(), red.getResults().end());
      }
      auto blockRed = BlockReduceOp::create(b, loc, state);
      blockRed.getCombine().getBlocks().clear();
      IRMapping none;
      k->loop.getMerge().cloneInto(&blockRed.getCombine(), none);
      Value leader = ix.cmp(arith::CmpIPredicate::eq, m.team, ix.c(0));
      auto store = scf::IfOp::create(b, loc, TypeRange{}, leader, false);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      Value base = stateIndex(ix, m.blk, ix.c(which), k->lanes, m.lane,
                              state.size());
      for (auto [i, v] : llvm::enumerate(blockRed.getResults()))
        StoreOp::create(b, loc, ValueRange{toF32(b, loc, v)}, states,
                        ix.add(base, ix.c(i)));
    }
    k->rows->erase();
    dropResultParams(kernel, states);
    return success();
  }

  LogicalResult buildFinal(KernelOp kernel, int64_t n, unsigned numOperands) {
    FailureOr<RowKernel> k = analyse(kernel);
    if (failed(k))
      return failure();
    OpBuilder b(kernel.getContext());
    Location loc = kernel.getLoc();
    ChunkMapping m = chunkMapping(kernel, *k, n, b);
    Value states = addParam(
        kernel, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()),
        b.getNamedAttr(KernelOp::kOperand, b.getI64IntegerAttr(numOperands)));
    // The tied result operands (never read: the kernel writes the results).
    unsigned results = 0;
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (DictionaryAttr a = kernel.getArgAttrDict(i))
        results += a.get(KernelOp::kResult) != nullptr;
    for (unsigned r = 0; r < results; ++r)
      addParam(kernel, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()),
               b.getNamedAttr(KernelOp::kOperand,
                              b.getI64IntegerAttr(numOperands + 1 + r)));
    Ix ix{b, loc};
    Value row = rowOfPosition(kernel, *k, b, ix.sub(m.hi, ix.c(1)));
    IRMapping map = cloneRowPrologue(b, *k, row, m.lane);
    Block &body = k->rows.getBody().front();
    Value begin = map.lookup(k->begin), end = map.lookup(k->end);
    Value mine = arith::AndIOp::create(
        b, loc, ix.cmp(arith::CmpIPredicate::eq, m.team, ix.c(0)),
        arith::AndIOp::create(
            b, loc,
            ix.cmp(arith::CmpIPredicate::sgt, ix.sub(end, begin), ix.c(n)),
            ix.cmp(arith::CmpIPredicate::sge, begin, m.lo)));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, mine, false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value nn = ix.c(n);
    Value first = ix.div(begin, nn);
    Value last = ix.div(ix.sub(end, ix.c(1)), nn);
    Value startsInside =
        ix.cmp(arith::CmpIPredicate::ne, begin, ix.mul(first, nn));
    Value which0 = arith::SelectOp::create(b, loc, startsInside, ix.c(1), ix.c(0));
    TypeRange types = k->loop.getResultTypes();
    auto loadState = [&](Value chunk, Value which) {
      Value base = stateIndex(ix, chunk, which, k->lanes, m.lane, types.size());
      SmallVector<Value> out;
      for (auto [i, t] : llvm::enumerate(types)) {
        Value v = LoadOp::create(b, loc, TypeRange{b.getF32Type()}, states,
                                 ix.add(base, ix.c(i)))
                      .getResult(0);
        out.push_back(fromF32(b, loc, v, t));
      }
      return out;
    };
    SmallVector<Value> init = loadState(first, which0);
    auto loop = scf::ForOp::create(b, loc, ix.add(first, ix.c(1)),
                                   ix.add(last, ix.c(1)), ix.c(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> next = loadState(loop.getInductionVar(), ix.c(0));
      SmallVector<Value> merged =
          inlineMerge(b, k->loop.getMerge(), loop.getRegionIterArgs(), next);
      scf::YieldOp::create(b, loc, merged);
    }
    // The epilogue on the merged state.
    IRMapping epi = map;
    Operation *firstEpilogue = k->loop->getNextNode();
    if (k->teamReduce) {
      for (auto [o, v] : llvm::zip(k->teamReduce.getResults(), loop.getResults()))
        epi.map(o, v);
      firstEpilogue = k->teamReduce->getNextNode();
    } else {
      for (auto [o, v] : llvm::zip(k->loop.getResults(), loop.getResults()))
        epi.map(o, v);
    }
    for (Operation *op = firstEpilogue; op != body.getTerminator();
         op = op->getNextNode())
      b.clone(*op, epi);
    k->rows->erase();
    return success();
  }
};
} // namespace
