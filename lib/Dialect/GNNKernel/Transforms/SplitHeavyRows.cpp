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
// gains, over chunks of L = max(N, ceil(edges / max-chunks)) positions (at
// most max-chunks of them):
//  - `<name>_partial`, a block per chunk: for the heavy row of the chunk's
//    first position, when it crosses the chunk's boundaries, the teams share
//    the chunk's edges of the row (and those in the previous chunk when the
//    row starts strictly inside it), team and block reductions use the
//    loop's merge region, and the chunk's partial state is written;
//  - `<name>_final`, a block per chunk: heavy rows wholly inside the chunk
//    (possible only when L > N; found by probing the chunk's rows `lanes`
//    at a time into a team-reduced mask) are reduced by the block's teams
//    and finished there; then, a team per chunk (chunk `block * teams + team`),
//    the heavy row starting in that chunk and crossing its end gets the
//    partial states of its chunks (from the next one when it starts inside
//    this one) merged in chunk order, then the epilogue.
// The partial states live in a buffer of their own (a result of the partial
// kernel, an operand of the final one). All three kernels update the results
// in place, each its own rows: the row kernel's launch `overlaps` the other
// two (the runtime starts it beside them on a second stream). With L = N
// (graphs of at most N * max-chunks edges) no heavy row fits in a chunk and
// the final kernel's row walk is skipped.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"
#include "KernelSharing.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
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

/// The threads of the partial and final kernels' blocks (a chunk each).
constexpr int64_t kChunkBlock = 256;

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
BlockArgument addParam(KernelOp kernel, Type type, NamedAttribute binding,
                       std::optional<NamedAttribute> extra = std::nullopt) {
  Block &entry = kernel.getBody().front();
  BlockArgument arg = entry.addArgument(type, kernel.getLoc());
  SmallVector<Attribute> attrs;
  if (ArrayAttr old = kernel.getArgAttrsAttr())
    attrs.assign(old.begin(), old.end());
  attrs.resize(entry.getNumArguments() - 1,
               DictionaryAttr::get(kernel.getContext()));
  NamedAttrList list;
  list.push_back(binding);
  if (extra)
    list.push_back(*extra);
  attrs.push_back(list.getDictionary(kernel.getContext()));
  kernel.setArgAttrsAttr(ArrayAttr::get(kernel.getContext(), attrs));
  kernel.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
      kernel.getContext(), entry.getArgumentTypes(), {})));
  return arg;
}

/// The existing parameter of `kernel` bound to (`key`, `value`), or a new
/// one of `type` (with `extra` beside its binding).
Value param(KernelOp kernel, StringRef key, Attribute value, Type type,
            std::optional<NamedAttribute> extra = std::nullopt) {
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    if (DictionaryAttr a = kernel.getArgAttrDict(i))
      if (a.get(key) == value)
        return kernel.getArgument(i);
  OpBuilder b(kernel.getContext());
  return addParam(kernel, type, b.getNamedAttr(key, value), extra);
}

/// The kernel's parameter for the graph index array `name` (of the row
/// pointers' index type), added if it has none.
Value graphArray(KernelOp kernel, const RowKernel &k, StringRef name) {
  return param(kernel, KernelOp::kGraph,
               StringAttr::get(kernel.getContext(), name),
               rowPointerLoad(k.end).getType());
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
  Value rem(Value x, Value y) { return arith::RemSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value load(Value array, Value pos) {
    Type t = cast<MemRefType>(array.getType()).getElementType();
    Value v = LoadOp::create(b, loc, TypeRange{t}, array, pos).getResult(0);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
};

/// A kernel's partial states, one per chunk: `lanes x values` elements,
/// [lane][value]; element i of a lane's state of chunk s at s * lanes *
/// values + lane * values + i in the `states` buffer.
struct StateSlots {
  Value states;
  int64_t lanes = 0, values = 0;
  Type element;

  /// Elements one access of a lane's state moves: 4 or 2 when they divide
  /// the values (so all are aligned), else 1.
  int64_t accessWidth() const {
    for (int64_t w : {4, 2})
      if (values % w == 0)
        return w;
    return 1;
  }

  /// The buffer and position of element `i` of `lane`'s state `slot` (the
  /// chunk's).
  std::pair<Value, Value> where(Ix &ix, Value slot, Value lane,
                                int64_t i) const {
    Value g = ix.add(ix.mul(slot, ix.c(lanes * values)),
                     ix.add(ix.mul(lane, ix.c(values)), ix.c(i)));
    return {states, g};
  }

  void store(Ix &ix, Value slot, Value lane, int64_t i,
             ArrayRef<Value> part) const {
    auto [buffer, pos] = where(ix, slot, lane, i);
    StoreOp::create(ix.b, ix.loc, part, buffer, pos);
  }

  SmallVector<Value> load(Ix &ix, Value slot, Value lane, int64_t i,
                          int64_t count) const {
    auto [buffer, pos] = where(ix, slot, lane, i);
    SmallVector<Type> types(count, element);
    return LoadOp::create(ix.b, ix.loc, types, buffer, pos).getResults();
  }
};

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

/// Replaces the kernel's for_rows by a for_blocks over the chunks of `len =
/// max(split, ceil(edges / maxChunks))` positions; returns the chunk's block,
/// team and lane, its positions [lo, hi) and `len`, with the builder inside
/// the new mapping (a block per chunk).
struct ChunkMapping {
  Value blk, team, lane, lo, hi, len, edges, chunks;
  /// Rows of more edges than this are heavy (the split).
  Value threshold;
};

ChunkMapping chunkMapping(KernelOp kernel, RowKernel &k, int64_t split,
                          int64_t maxChunks, OpBuilder &b) {
  Location loc = kernel.getLoc();
  Value edgesParam = param(kernel, KernelOp::kSize, b.getStringAttr("edges"),
                           b.getI64Type());
  b.setInsertionPoint(k.rows);
  Ix ix{b, loc};
  Value edges = arith::IndexCastOp::create(b, loc, b.getIndexType(), edgesParam);
  Value threshold = ix.c(split);
  Value shortest = arith::CeilDivSIOp::create(b, loc, edges, ix.c(maxChunks));
  Value len = ix.max(threshold, shortest);
  Value chunks = arith::CeilDivSIOp::create(b, loc, edges, len);
  auto blocks = ForBlocksOp::create(b, loc, chunks, k.lanes);
  Block *body = new Block();
  blocks.getBody().push_back(body);
  ChunkMapping m;
  m.blk = body->addArgument(b.getIndexType(), loc);
  m.team = body->addArgument(b.getIndexType(), loc);
  m.lane = body->addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(body);
  YieldOp::create(b, loc);
  b.setInsertionPoint(body->getTerminator());
  m.len = len;
  m.threshold = threshold;
  m.edges = edges;
  m.chunks = chunks;
  m.lo = ix.mul(m.blk, len);
  m.hi = ix.min(ix.add(m.lo, len), edges);
  return m;
}

/// The partial states of a split kernel in `states` (a parameter already
/// added).
StateSlots stateSlots(RowKernel &k, Value states, Type element) {
  StateSlots slots;
  slots.states = states;
  slots.lanes = k.lanes;
  slots.values = k.loop.getNumResults();
  slots.element = element;
  return slots;
}

/// The row (destination, or source when reversed) of traversal position p.
Value rowOfPosition(KernelOp kernel, const RowKernel &k, OpBuilder &b,
                    Value p) {
  Ix ix{b, kernel.getLoc()};
  if (!k.reversed)
    return ix.load(graphArray(kernel, k, "csr_dst"), p);
  Value slot = ix.load(graphArray(kernel, k, "csc_to_csr"), p);
  return ix.load(graphArray(kernel, k, "csr_col"), slot);
}

/// The types of the buffers bound to the kernel's results, in result order.
SmallVector<Type> resultBufferTypes(KernelOp kernel) {
  SmallVector<std::pair<int64_t, Type>> results;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    if (DictionaryAttr a = kernel.getArgAttrDict(i))
      if (auto r = a.getAs<IntegerAttr>(KernelOp::kResult))
        results.push_back({r.getInt(), kernel.getArgument(i).getType()});
  llvm::sort(results, llvm::less_first());
  return llvm::to_vector(llvm::make_second_range(results));
}

/// The element type of the partial-state buffer: the kernel's arithmetic
/// type (that of its results, f32 for bf16 and f16 ones), so f32 kernels
/// keep f32 states (their double accumulators rounded), half-precision ones
/// never round a state to their storage type, and f64 kernels lose nothing.
/// (States live in a result's rows only where that result is of this type.)
Type stateElementType(KernelOp kernel) {
  for (Type t : resultBufferTypes(kernel))
    if (auto f = dyn_cast<FloatType>(cast<MemRefType>(t).getElementType()))
      return mlir::gnn::arithmeticType(f);
  return Float32Type::get(kernel.getContext());
}

/// Carried values converted to the partial-state type `t`, and back.
Value convertFloat(OpBuilder &b, Location loc, Value v, Type t) {
  unsigned from = v.getType().getIntOrFloatBitWidth(),
           to = t.getIntOrFloatBitWidth();
  if (from == to)
    return v;
  if (from > to)
    return arith::TruncFOp::create(b, loc, t, v);
  return arith::ExtFOp::create(b, loc, t, v);
}

/// Reduces the edges [from, to) of one row (`map` maps the row prologue) with
/// all teams of the block: the cloned edge loop with the teams interleaved,
/// the team reduction, then a block reduction through the loop's merge
/// region. Returns the block's state (every thread gets it).
SmallVector<Value> reduceWithBlock(OpBuilder &b, Location loc,
                                   RowKernel &k, IRMapping &map,
                                   Value from, Value to, Value team,
                                   int64_t teams) {
  Ix ix{b, loc};
  Value step = map.lookup(k.loop.getStep());
  Value first =
      ix.add(ix.add(from, ix.mul(team, step)), map.lookup(k.offset));
  Value blockStep = ix.mul(step, ix.c(teams));
  IRMapping loopMap = map;
  auto loop = cast<ForEdgesOp>(b.clone(*k.loop, loopMap));
  loop.getBeginMutable().assign(first);
  loop.getEndMutable().assign(to);
  loop.getStepMutable().assign(blockStep);
  SmallVector<Value> state(loop.getResults());
  if (k.teamReduce) {
    IRMapping redMap = map;
    for (auto [o, v] : llvm::zip(k.loop.getResults(), loop.getResults()))
      redMap.map(o, v);
    auto red = cast<TeamReduceOp>(b.clone(*k.teamReduce, redMap));
    state.assign(red.getResults().begin(), red.getResults().end());
  }
  auto blockRed = BlockReduceOp::create(b, loc, state);
  blockRed.getCombine().getBlocks().clear();
  IRMapping none;
  k.loop.getMerge().cloneInto(&blockRed.getCombine(), none);
  return SmallVector<Value>(blockRed.getResults());
}

/// Clones the row epilogue (what follows the loop and its team reduction)
/// with `state` standing for the reduced loop results.
void cloneEpilogue(OpBuilder &b, RowKernel &k, IRMapping map,
                   ValueRange state) {
  Operation *first = k.loop->getNextNode();
  ValueRange reduced = k.loop.getResults();
  if (k.teamReduce) {
    reduced = k.teamReduce.getResults();
    first = k.teamReduce->getNextNode();
  }
  for (auto [o, v] : llvm::zip(reduced, state))
    map.map(o, v);
  Operation *end = k.rows.getBody().front().getTerminator();
  for (Operation *op = first; op != end; op = op->getNextNode())
    b.clone(*op, map);
}

/// An i32 constant.
Value c32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult();
}

/// In the final kernel, the marks (bit l: row base + l) of the rows from
/// `base`, `lanes` of them (not past `rowHi`, the chunk's last row), that
/// are heavy and wholly inside the chunk: lane l of every team reads the
/// range of row base + l, and a team reduction gathers the bits (the same
/// in every team). 32-bit marks (lanes <= 32): a 64-bit mask live across
/// the row reductions cost registers.
Value insideRowMarks(OpBuilder &b, Location loc, RowKernel &k,
                     const ChunkMapping &m, Value base, Value rowHi) {
  Ix ix{b, loc};
  Value mine = ix.add(base, m.lane);
  // The row's range only (the rest of this clone is dead: nvcc drops it);
  // lanes past the chunk's last row probe that row, unmarked.
  IRMapping probe = cloneRowPrologue(b, k, ix.min(mine, rowHi), m.lane);
  Value begin = probe.lookup(k.begin), end = probe.lookup(k.end);
  Value inside = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc,
          ix.cmp(arith::CmpIPredicate::sgt, ix.sub(end, begin), m.threshold),
          ix.cmp(arith::CmpIPredicate::sle, mine, rowHi)),
      arith::AndIOp::create(b, loc,
                            ix.cmp(arith::CmpIPredicate::sge, begin, m.lo),
                            ix.cmp(arith::CmpIPredicate::sle, end, m.hi)));
  Type i32 = b.getI32Type();
  Value lane32 = arith::IndexCastOp::create(b, loc, i32, m.lane);
  Value marks = arith::SelectOp::create(
      b, loc, inside, arith::ShLIOp::create(b, loc, c32(b, loc, 1), lane32),
      c32(b, loc, 0));
  if (k.lanes > 1) {
    auto red = TeamReduceOp::create(b, loc, ValueRange{marks}, 1, k.lanes);
    buildCombineRegion(
        loc, red.getCombine(), {i32},
        [&](OpBuilder &rb, ValueRange x, ValueRange y) {
          return SmallVector<Value>{
              arith::OrIOp::create(rb, loc, x[0], y[0]).getResult()};
        });
    marks = red.getResult(0);
  }
  return marks;
}

/// In the final kernel, the rows marked in `marks` (bit l: row base + l),
/// one after another, each reduced by the block's `teams` teams and
/// finished by the first.
void finishMarkedRows(OpBuilder &b, Location loc, RowKernel &k,
                      const ChunkMapping &m, Value base, Value marks,
                      int64_t teams) {
  Ix ix{b, loc};
  auto rows = scf::ForOp::create(b, loc, c32(b, loc, 0), c32(b, loc, k.lanes),
                                 c32(b, loc, 1));
  // Rolled: each trip holds a whole row reduction.
  rows->setAttr(kUnrollAttrName, b.getI64IntegerAttr(1));
  b.setInsertionPointToStart(rows.getBody());
  Value j = rows.getInductionVar();
  Value bit = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, marks, j), c32(b, loc, 1));
  auto ifMarked =
      scf::IfOp::create(b, loc, TypeRange{},
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                              bit, c32(b, loc, 0)),
                        false);
  b.setInsertionPointToStart(&ifMarked.getThenRegion().front());
  Value row =
      ix.add(base, arith::IndexCastOp::create(b, loc, b.getIndexType(), j));
  IRMapping map = cloneRowPrologue(b, k, row, m.lane);
  Value begin = map.lookup(k.begin);
  Value end = map.lookup(k.end);
  SmallVector<Value> state =
      reduceWithBlock(b, loc, k, map, begin, end, m.team, teams);
  Value leader = ix.cmp(arith::CmpIPredicate::eq, m.team, ix.c(0));
  auto ifLeader = scf::IfOp::create(b, loc, TypeRange{}, leader, false);
  b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
  cloneEpilogue(b, k, map, state);
}

/// In the final kernel, the heavy rows wholly inside the chunk (only when
/// chunks are longer than the split), finished by the whole block one
/// after another. The chunk's rows are probed `lanes` at a time into a bit
/// mask (insideRowMarks; the same in every team, so the block takes each
/// marked row together): probing one row after another made a chunk over
/// many short rows a chain of dependent row-pointer reads (arxiv-like
/// spmm-sum's final kernel 0.09 -> 0.13 ms). Leaves the builder where it
/// was.
void finishRowsInside(OpBuilder &b, KernelOp kernel, RowKernel &k,
                      const ChunkMapping &m, int64_t teams) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = kernel.getLoc();
  Ix ix{b, loc};
  Value longer = ix.cmp(arith::CmpIPredicate::sgt, m.len, m.threshold);
  auto ifLonger = scf::IfOp::create(b, loc, TypeRange{}, longer, false);
  b.setInsertionPointToStart(&ifLonger.getThenRegion().front());
  Value rowLo = rowOfPosition(kernel, k, b, m.lo);
  Value rowHi = rowOfPosition(kernel, k, b, ix.sub(m.hi, ix.c(1)));
  auto walk =
      scf::ForOp::create(b, loc, rowLo, ix.add(rowHi, ix.c(1)), ix.c(k.lanes));
  b.setInsertionPointToStart(walk.getBody());
  Value base = walk.getInductionVar();
  Value marks = insideRowMarks(b, loc, k, m, base, rowHi);
  finishMarkedRows(b, loc, k, m, base, marks, teams);
}

/// The state of `lane` in chunk `chunk` (its partial kernel's), converted to
/// the loop's carried `types`.
SmallVector<Value> loadChunkState(Ix &ix, const StateSlots &slots, Value chunk,
                                  Value lane, TypeRange types) {
  int64_t width = slots.accessWidth();
  SmallVector<Value> out;
  for (size_t i = 0; i < types.size(); i += width) {
    SmallVector<Value> part = slots.load(ix, chunk, lane, i, width);
    for (int64_t j = 0; j < width; ++j)
      out.push_back(convertFloat(ix.b, ix.loc, part[j], types[i + j]));
  }
  return out;
}

/// In the final kernel, the heavy row starting in a chunk and going past its
/// end: its partial states merged in chunk order, by a team per chunk (team
/// t of block b takes chunk b * teams + t): only the first chunks / teams
/// blocks have merges to do, the others are done at once (a block per
/// chunk, each reading the chunk's last row, made the kernel waves of blocks
/// waiting on dependent loads). Then the epilogue on the merged state.
void mergeCrossingRow(OpBuilder &b, KernelOp kernel, RowKernel &k,
                      const ChunkMapping &m, const StateSlots &slots,
                      int64_t teams) {
  Location loc = kernel.getLoc();
  Ix ix{b, loc};
  Value chunk = ix.add(ix.mul(m.blk, ix.c(teams)), m.team);
  auto ifChunk = scf::IfOp::create(
      b, loc, TypeRange{}, ix.cmp(arith::CmpIPredicate::slt, chunk, m.chunks),
      false);
  b.setInsertionPointToStart(&ifChunk.getThenRegion().front());
  Value lo = ix.mul(chunk, m.len);
  Value hi = ix.min(ix.add(lo, m.len), m.edges);
  Value row = rowOfPosition(kernel, k, b, ix.sub(hi, ix.c(1)));
  IRMapping map = cloneRowPrologue(b, k, row, m.lane);
  Value begin = map.lookup(k.begin), end = map.lookup(k.end);
  Value mine = arith::AndIOp::create(
      b, loc,
      ix.cmp(arith::CmpIPredicate::sgt, ix.sub(end, begin), m.threshold),
      arith::AndIOp::create(b, loc,
                            ix.cmp(arith::CmpIPredicate::sge, begin, lo),
                            ix.cmp(arith::CmpIPredicate::sgt, end, hi)));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, mine, false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  // The row's states: those of its chunks, from the next one when it
  // starts inside this one (the next chunk's state covers that piece).
  Value nn = m.len;
  Value first = ix.div(begin, nn);
  Value last = ix.div(ix.sub(end, ix.c(1)), nn);
  Value startsInside =
      ix.cmp(arith::CmpIPredicate::ne, begin, ix.mul(first, nn));
  first = arith::SelectOp::create(b, loc, startsInside, ix.add(first, ix.c(1)),
                                  first);
  TypeRange types = k.loop.getResultTypes();
  SmallVector<Value> init = loadChunkState(ix, slots, first, m.lane, types);
  auto loop = scf::ForOp::create(b, loc, ix.add(first, ix.c(1)),
                                 ix.add(last, ix.c(1)), ix.c(1), init);
  // The loads do not depend on the merged state: unrolled, the reads of
  // eight chunks are in flight together (a row over many chunks was a
  // chain of dependent L2 round trips, the final kernel's critical path).
  loop->setAttr(kUnrollAttrName, b.getI64IntegerAttr(8));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> next =
        loadChunkState(ix, slots, loop.getInductionVar(), m.lane, types);
    SmallVector<Value> merged =
        inlineMerge(b, k.loop.getMerge(), loop.getRegionIterArgs(), next);
    scf::YieldOp::create(b, loc, merged);
  }
  // The epilogue on the merged state.
  cloneEpilogue(b, k, map, loop.getResults());
}

struct SplitHeavyRows
    : public mlir::gnnk::impl::GNNSplitHeavyRowsBase<SplitHeavyRows> {
  using GNNSplitHeavyRowsBase::GNNSplitHeavyRowsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The cap also sizes the partial-result buffer (times 2 x lanes x
    // carried values): kept far from 64-bit overflow.
    if (std::string bad = ::mlir::gnn::checkMaxChunks(maxChunks);
        !bad.empty()) {
      module.emitError() << bad;
      return signalPassFailure();
    }
    SmallVector<KernelOp> kernels;
    for (auto kernel : module.getOps<KernelOp>())
      if (kernel->hasAttr(kSplitAttr))
        kernels.push_back(kernel);
    if (kernels.empty()) {
      // Nothing changed: the pass manager skips verifying the module again
      // (a tenth of --gnn-to-program's time without heavy rows).
      markAllAnalysesPreserved();
      return;
    }
    // The launches of every kernel, gathered in one walk (in program order)
    // outside the kernels' bodies: a walk of the module per split kernel
    // made the pass quadratic in the number of kernels (1,500 chained spmm:
    // 34 s).
    launchesOf = launchesByKernel(module);
    for (KernelOp kernel : kernels)
      if (failed(split(kernel)))
        return signalPassFailure();
  }

  /// The launches of each kernel by symbol name, in program order (kept up
  /// to date as launches are replaced).
  llvm::DenseMap<StringAttr, SmallVector<LaunchOp>> launchesOf;

  LogicalResult split(KernelOp kernel) {
    int64_t n = cast<IntegerAttr>(kernel->getAttr(kSplitAttr)).getInt();
    kernel->removeAttr(kSplitAttr);
    if (n < 1)
      return kernel.emitOpError() << "expects gnnk.split >= 1 but got " << n;
    FailureOr<RowKernel> k = analyse(kernel);
    if (failed(k))
      return failure();
    SmallVector<LaunchOp> launches =
        launchesOf.lookup(kernel.getSymNameAttr());
    Type stateElement = stateElementType(kernel);
    int64_t stateSize = k->lanes * k->loop.getNumResults();
    unsigned numResults = resultBufferTypes(kernel).size();
    OpBuilder mb(kernel.getContext());
    mb.setInsertionPointAfter(kernel);
    auto partial = cast<KernelOp>(mb.clone(*kernel));
    partial.setSymName((kernel.getSymName() + "_partial").str());
    mb.setInsertionPointAfter(partial);
    auto final = cast<KernelOp>(mb.clone(*kernel));
    final.setSymName((kernel.getSymName() + "_final").str());
    // A block of eight teams per chunk, whatever the light rows' block.
    // No min_blocks: ptxas keeps the final kernel at 40-64 registers and
    // spills a few bytes, and letting it take 76-108 (min blocks 1-3) made
    // reddit-like's attention 5-30 % slower (fewer blocks per SM;
    // bench/results/minblocks-s60/).
    partial.setBlock(kChunkBlock);
    final.setBlock(kChunkBlock);
    unsigned numOperands = 0;
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (DictionaryAttr a = kernel.getArgAttrDict(i))
        numOperands += a.get(KernelOp::kOperand) != nullptr;
    if (failed(buildPartial(partial, n, numResults)) ||
        failed(buildFinal(final, n, numOperands)))
      return failure();
    // A block per chunk of positions: min(ceil(edges / n), maxChunks).
    MLIRContext *ctx = kernel.getContext();
    AffineExpr edges = getAffineSymbolExpr(1, ctx);
    auto capped = [&](AffineExpr perChunk) {
      return AffineMap::get(0, kNumSizeSymbols,
                            {edges.ceilDiv(n) * perChunk,
                             getAffineConstantExpr(maxChunks, ctx) * perChunk},
                            ctx);
    };
    AffineExpr one = getAffineConstantExpr(1, ctx);
    partial.setGridAttr(AffineMapAttr::get(capped(one)));
    final.setGridAttr(AffineMapAttr::get(capped(one)));
    guardLightRows(*k, n);
    // The row kernel updates the results in place after the other two.
    addTiedResultParams(kernel, numOperands);
    // Launches: the partial states (a buffer of their own), the final
    // kernel finishing the heavy rows, and the row kernel writing the light
    // rows, which the other two neither read nor write: it may run beside
    // them (`overlaps`; the runtime starts it on a second stream).
    launchesOf[kernel.getSymNameAttr()].clear(); // replaced below
    for (LaunchOp l : launches) {
      OpBuilder hb(l);
      SmallVector<Type> partialTypes(l.getResultTypes());
      SmallVector<Attribute> partialRows(l.getRows().begin(),
                                         l.getRows().end());
      partialTypes.push_back(
          RankedTensorType::get({ShapedType::kDynamic}, stateElement));
      partialRows.push_back(
          AffineMapAttr::get(capped(getAffineConstantExpr(stateSize, ctx))));
      auto p = LaunchOp::create(
          hb, l.getLoc(), partialTypes,
          FlatSymbolRefAttr::get(partial.getSymNameAttr()), l.getGraph(),
          l.getArgs(), hb.getArrayAttr(partialRows), DenseI64ArrayAttr(),
          IntegerAttr());
      auto tiedLaunch = [&](KernelOp callee, SmallVector<Value> args,
                            ValueRange results, IntegerAttr overlaps) {
        SmallVector<int64_t> tied;
        for (Value r : results) {
          tied.push_back(args.size());
          args.push_back(r);
        }
        return LaunchOp::create(
            hb, l.getLoc(), l.getResultTypes(),
            FlatSymbolRefAttr::get(callee.getSymNameAttr()), l.getGraph(),
            args, l.getRows(), hb.getDenseI64ArrayAttr(tied), overlaps);
      };
      SmallVector<Value> finalArgs(l.getArgs());
      finalArgs.push_back(p.getResult(numResults));
      auto f = tiedLaunch(final, finalArgs,
                          p.getResults().take_front(numResults), IntegerAttr());
      auto rows = tiedLaunch(kernel, SmallVector<Value>(l.getArgs()),
                             f.getResults(), hb.getI64IntegerAttr(2));
      l.replaceAllUsesWith(rows.getResults());
      l.erase();
      launchesOf[partial.getSymNameAttr()].push_back(p);
      launchesOf[final.getSymNameAttr()].push_back(f);
      launchesOf[kernel.getSymNameAttr()].push_back(rows);
    }
    return success();
  }

  /// Parameters for the launch's tied result operands, numbered from
  /// `first` (never read: the kernel writes the results through its result
  /// parameters, bound to the same buffers).
  static void addTiedResultParams(KernelOp kernel, unsigned first) {
    OpBuilder b(kernel.getContext());
    for (auto [r, type] : llvm::enumerate(resultBufferTypes(kernel)))
      addParam(kernel, type,
               b.getNamedAttr(KernelOp::kOperand,
                              b.getI64IntegerAttr(first + r)));
  }

  /// The row kernel skips heavy rows (more than the split's `n` edges, the
  /// threshold the other two kernels use).
  void guardLightRows(RowKernel &k, int64_t n) {
    Location loc = k.loop.getLoc();
    OpBuilder b(k.loop);
    Ix ix{b, loc};
    Value size = ix.sub(k.end, k.begin);
    Value threshold = ix.c(n);
    Value light = ix.cmp(arith::CmpIPredicate::sle, size, threshold);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, light, false);
    Block *then = &ifOp.getThenRegion().front();
    Block &body = k.rows.getBody().front();
    SmallVector<Operation *> move;
    for (Operation *op = k.loop; op != body.getTerminator(); op = op->getNextNode())
      move.push_back(op);
    for (Operation *op : move)
      op->moveBefore(then->getTerminator());
  }

  LogicalResult buildPartial(KernelOp kernel, int64_t n,
                             unsigned numResults) {
    FailureOr<RowKernel> k = analyse(kernel);
    if (failed(k))
      return failure();
    OpBuilder b(kernel.getContext());
    Location loc = kernel.getLoc();
    Type stateElement = stateElementType(kernel);
    ChunkMapping m = chunkMapping(kernel, *k, n, maxChunks, b);
    // The kernel's results are this launch's, and the states one more.
    Value states =
        addParam(kernel, MemRefType::get({ShapedType::kDynamic}, stateElement),
                 b.getNamedAttr(KernelOp::kResult,
                                b.getI64IntegerAttr(numResults)));
    StateSlots slots = stateSlots(*k, states, stateElement);
    Ix ix{b, loc};
    int64_t teams = kernel.getBlock() / k->lanes;
    // The piece of the heavy row at the chunk's first position when it
    // crosses the chunk's boundaries (rows wholly inside are the final
    // kernel's). A row starting strictly inside the previous chunk has its
    // piece there taken here too (at most 2 * len - 1 positions), so every
    // chunk has one state.
    Value row = rowOfPosition(kernel, *k, b, m.lo);
    IRMapping map = cloneRowPrologue(b, *k, row, m.lane);
    Value begin = map.lookup(k->begin), end = map.lookup(k->end);
    Value heavy =
        ix.cmp(arith::CmpIPredicate::sgt, ix.sub(end, begin), m.threshold);
    Value before = ix.cmp(arith::CmpIPredicate::slt, begin, m.lo);
    Value crosses = arith::OrIOp::create(
        b, loc, before, ix.cmp(arith::CmpIPredicate::sgt, end, m.hi));
    heavy = arith::AndIOp::create(b, loc, heavy, crosses);
    Value absorbed = arith::AndIOp::create(
        b, loc, before,
        ix.cmp(arith::CmpIPredicate::sgt, begin, ix.sub(m.lo, m.len)));
    Value from = arith::SelectOp::create(b, loc, absorbed, begin,
                                         ix.max(begin, m.lo));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, heavy, false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> state = reduceWithBlock(
        b, loc, *k, map, from, ix.min(end, m.hi), m.team, teams);
    Value leader = ix.cmp(arith::CmpIPredicate::eq, m.team, ix.c(0));
    auto store = scf::IfOp::create(b, loc, TypeRange{}, leader, false);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    int64_t width = slots.accessWidth();
    for (size_t i = 0; i < state.size(); i += width) {
      SmallVector<Value> part;
      for (int64_t j = 0; j < width; ++j)
        part.push_back(convertFloat(b, loc, state[i + j], stateElement));
      slots.store(ix, m.blk, m.lane, i, part);
    }
    k->rows->erase();
    return success();
  }

  /// Makes `kernel` (a clone of the row kernel) the final kernel: the heavy
  /// rows wholly inside a chunk, then those crossing chunks from their
  /// partial states (`numOperands` operands before the states' buffer and
  /// the tied results).
  LogicalResult buildFinal(KernelOp kernel, int64_t n, unsigned numOperands) {
    FailureOr<RowKernel> k = analyse(kernel);
    if (failed(k))
      return failure();
    OpBuilder b(kernel.getContext());
    Type stateElement = stateElementType(kernel);
    ChunkMapping m = chunkMapping(kernel, *k, n, maxChunks, b);
    Value states = addParam(
        kernel, MemRefType::get({ShapedType::kDynamic}, stateElement),
        b.getNamedAttr(KernelOp::kOperand, b.getI64IntegerAttr(numOperands)));
    addTiedResultParams(kernel, numOperands + 1);
    StateSlots slots = stateSlots(*k, states, stateElement);
    int64_t teams = kernel.getBlock() / k->lanes;
    finishRowsInside(b, kernel, *k, m, teams);
    mergeCrossingRow(b, kernel, *k, m, slots, teams);
    k->rows->erase();
    return success();
  }
};
} // namespace
