//===- LowerExtremumGrad.cpp - extremum_grad groups to gnnk kernels -------===//
//
// Part of gnnc. The lowering of the extremum_grad family: the backward of a
// max/min aggregation, routing each element of the output gradient to the
// source(s) its winner code names.
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
// Extremum gradients: a lane per element of the output gradient
//===----------------------------------------------------------------------===//

namespace {
/// Blocks of teams of 32 lanes, of two kinds in one grid.
///
/// The first blocks are element blocks: team T covers 32 consecutive
/// elements (d, k) of `grad`, a lane per element, adding into the result
/// (zeroed before the launch) through `gnnk.atomic_add`. A lane reads its
/// winner code: a node id adds grad into that node's row (a code that names
/// no node, which no forward writes and the reference evaluator rejects,
/// adds nothing); -1 adds nothing. A tie code -(c + 1) (c edges attain the
/// extremum; see gnn.spmm) in a row that is not long is resolved by the
/// team, one element at a time: its lanes split the row's edges and add
/// grad / c to each edge whose input equals the extremum, in one walk (the
/// forward counted them).
///
/// A row is long when it has more edges than a block and than
/// kLongMeanDegrees times the mean degree. The other blocks, edge blocks,
/// resolve the ties of long rows, which a team would walk once per tie
/// element, alone: a team per 32 consecutive positions of the traversal
/// (CSR, or reversed CSC). Each lane reads its position's edge and whether
/// the row is long; the team then takes those rows one at a time and, slice
/// by slice of 32 elements, reads the row's codes; each tie element is then
/// tested by the lanes whose edges are in the row, one element at a time (a
/// lane per edge: a 32-byte sector per lane and tie). A hub row is so
/// spread over the grid, a team per 32 of its edges. In a graph whose
/// densest row (the last in increasing degree order) is not long, the edge
/// blocks stop after reading it.
///
/// Routing suits f32 and f64 rows, whose ties are rare. The coarse values of
/// bf16 and f16 rows tie often; the codegen pipeline pulls their gradient
/// along the edges instead (gnn-pull-extremum-grads), so this kernel sees
/// them only where a module is lowered without it. Until session 56 the
/// bf16/f16 kernel walked a hub row's tie slices by edge (a lane per tied
/// element, the row's edges one after the other, the kernel held to full
/// occupancy): still slower than f32's on every scoreboard graph, and
/// 10-27 % slower than the pull on all but pubmed (equal there), on an
/// H200 (bench/results/maxpull-s56/). With f32 inputs the walk by edge had
/// cost musae-github 12 % (0.078 -> 0.087 ms).
///
/// Until issue 29, codes of unweighted extrema did not count ties (-2 for
/// several neighbours), so the tie elements of rows above a block were
/// walked twice each (a count, then the shares) by one block, one element
/// at a time: musae-github's bf16 backward took 1.2 ms against f32's 0.1 ms
/// on an H200, its 160 rows above 256 edges walking 7.5M edge elements for
/// 7,043 tie elements; now 0.16-0.20 ms (bench/results/ties-h200-s19/).
/// Walking a slice's ties together by the team (branch `ties`, session 17)
/// was slower still: the hub rows stayed on one block. Also measured there:
/// a team per 128 positions (four probes a lane) halved the hubs' spread
/// and doubled musae-github's bf16 backward; a long row of more than a
/// block's edges alone made dense graphs pay a code read per edge.
/// The cost kept: a duplicate edge attaining the extremum is a tie (its
/// count is needed as soon as another source ties), so a dense random
/// graph with many duplicates walks them (f32 backward 0.09 -> 0.25-0.32 ms
/// on 50K nodes and 20M random edges).
///
/// Measured and not kept (bench/results/max-s44/, H200): walking by edge
/// the tie slices of rows that are not long when a slice holds at least 2,
/// 4 or 8 tie elements (bf16 blogcatalog 0.096 -> 0.139-0.148 ms, pubmed
/// 0.030 -> 0.048-0.058, musae-github 0.118 -> 0.121-0.129; f32 unchanged):
/// in a short row the lanes of a walk by element cover the row in
/// ceil(degree / 32) steps, the walk by edge takes a step per edge.
/// Measured and not kept (bench/results/winner-codes-h100/): pulling the
/// gradient of the nodes of many edges (more than 4, 16 or 64 times the
/// mean degree) along their own edges instead of adding into their rows
/// atomically, to spare the atomic unit a hub's many additions on one
/// address: slower on every scoreboard graph (the pull reads a code row
/// per edge; musae-github's hub contention costs less). Float2 and float4
/// atomics where neighbouring elements share a winner: slower.
///
/// The kernel as it is built: the builder helpers its phases share, then
/// one method per phase (a team's own elements, one tie element of a row
/// that is not long, the long rows' ties of a team's positions).
class ExtremumGradKernel {
public:
  /// Lanes per team.
  static constexpr int64_t kLanes = 32;
  /// A long row has more edges than a block and than this many times the
  /// mean degree: a team walks a shorter one once per tie element, at most
  /// that many times the mean degree over 32 lanes per walk.
  static constexpr int64_t kLongMeanDegrees = 8;

  ExtremumGradKernel(KernelGroupOp group, GroupParts &parts,
                     gnn::ExtremumGradOp op, int64_t row, int indexBits);

  /// Builds the kernel and replaces the group by its launch.
  void build();

private:
  /// Team `t`'s elements: row d, the first element and this lane's (f,
  /// `active` when it is in the row, at `at` in the row-major tensors).
  struct Slice {
    Value d, base, rowStart, f, active, at;
  };

  Value i32c(int64_t v);
  Value compare(arith::CmpFPredicate pred, Value v, double c);
  Value nonzero(Value v);
  /// `1 << i` as an i32 mask.
  Value bitMask(Value i);
  /// Bit `i` of `bits` as an i1.
  Value bitOf(Value bits, Value i);
  /// Runs `then` under an `scf.if` on `cond`.
  void whether(Value cond, function_ref<void()> then);
  /// `body(i)` for each set bit i < count of `bits`, in a rolled loop (the
  /// bodies are row walks).
  void forEachBit(Value bits, int64_t count, function_ref<void(Value)> body);
  /// The team-reduced bit mask of the lanes where `cond` holds (the same in
  /// every lane of the team).
  Value teamMask(Value cond);

  Slice slice(Value t);
  /// Slice `c` of row `d`.
  Slice slice(Value d, Value c);
  /// `cond` where the lane's element is in the row.
  Value guarded(const Slice &s, Value cond);
  /// Whether `code` is a tie code, or the NaN code of a NaN extremum
  /// (unordered): below -1.
  Value isTie(Value code);
  /// What each edge attaining extremum `y` gets of `dy` for tie code
  /// `code`: dy / c, or NaN for a NaN extremum, as torch's scatter_reduce
  /// (0 * dy / 0).
  Value share(Value y, Value dy, Value code);
  /// Adds `v` into element `f` of node `nbr`'s row of the result.
  void addInto(Value nbr, Value f, Value v);

  /// The element blocks: the team's own elements, in an `scf.if` on the
  /// team covering any.
  void ownElements(Value firstTeam);
  /// Adds the lane's grad into the row of the winner its code names.
  void addToWinner(const Slice &s, Value code);
  /// The ties of slice `s` in a row that is not long, one element
  /// at a time.
  void teamTies(const Slice &s, Value code);
  /// Resolves the tie at lane `l` of slice `s` (the same for every lane):
  /// the lanes split the row's edges.
  void resolveElement(const Slice &s, const RowTraversal &rt, Value l);
  /// The row and the neighbour of the edge at traversal position `pos`.
  struct EdgeAt {
    Value row, nbr;
  };
  EdgeAt edgeAt(Value pos);
  /// What a lane of an edge block reads of its position (`first` plus its
  /// lane): whether the edge is in a long row, the row and the neighbour.
  struct Probe {
    Value first, isLong, row, nbr;
  };
  Probe probe(Value first);
  /// Whether the graph has a long row (its densest row is long): the edge
  /// blocks of a graph without one have nothing to do.
  Value anyLongRow();
  /// The edge blocks: the ties of long rows at the team's 32 positions
  /// probed by `p`.
  void longRowTies(const Probe &p);
  /// The ties of long row `d` where `mine` (the lane's edge, to `nbr`, is
  /// in the row): slice by slice, each tie element one at a time.
  void rowTies(Value d, Value mine, Value nbr);
  /// A tie slice's elements one at a time, a lane per edge.
  void tiesByElement(const Slice &s, Value ties, Value mine, Value nbr);

  KernelGroupOp group;
  GroupParts &parts;
  gnn::ExtremumGradOp op;
  int64_t row;
  bool reversed;
  int64_t block;
  /// Teams per block (the block, a multiple of 32 in [32, 1024]: the
  /// schedule attribute's verifier).
  int64_t teams;
  /// Slices of 32 elements per row.
  int64_t chunks;
  /// The rows of the output gradient (the aggregation's destinations) and
  /// of the result (its sources): both the nodes on a graph of one node
  /// set, a bipartite graph's sides otherwise.
  RowSpace rows, sources;
  AffineExpr nodes, edges;
  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  Type i32;
  /// The result, and the slices (a team each).
  Value out, slices;
  /// Rows of more edges than this are long: more than a block's and than
  /// kLongMeanDegrees times the mean degree.
  Value longThreshold;
  Value blk, team, lane;
};
} // namespace

ExtremumGradKernel::ExtremumGradKernel(KernelGroupOp group, GroupParts &parts,
                                       gnn::ExtremumGradOp op, int64_t row,
                                       int indexBits)
    : group(group), parts(parts), op(op), row(row), reversed(op.getReversed()),
      block(group.getScheduleAttr().getBlock()), teams(block / kLanes),
      chunks((row + kLanes - 1) / kLanes),
      rows(traversalRows(op.getGraph(), op.getReversed())),
      sources(sideRows(op.getGraph(), false, op.getReversed())),
      nodes(rows.expr(group.getContext())),
      edges(getAffineSymbolExpr(1, group.getContext())),
      kb(group, group.getKernel().str(), block, indexBits), b(kb.b),
      loc(kb.loc), i32(b.getI32Type()) {}

Value ExtremumGradKernel::i32c(int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v)).getResult();
}

Value ExtremumGradKernel::compare(arith::CmpFPredicate pred, Value v,
                                  double c) {
  return arith::CmpFOp::create(b, loc, pred, v, kb.fp(c)).getResult();
}

Value ExtremumGradKernel::nonzero(Value v) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, i32c(0))
      .getResult();
}

Value ExtremumGradKernel::bitMask(Value i) {
  return arith::ShLIOp::create(b, loc, i32c(1),
                               arith::IndexCastOp::create(b, loc, i32, i))
      .getResult();
}

Value ExtremumGradKernel::bitOf(Value bits, Value i) {
  return nonzero(arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(b, loc, bits,
                             arith::IndexCastOp::create(b, loc, i32, i)),
      i32c(1)));
}

void ExtremumGradKernel::whether(Value cond, function_ref<void()> then) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                /*withElseRegion=*/false);
  OpBuilder::InsertionGuard inIf(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  then();
}

void ExtremumGradKernel::forEachBit(Value bits, int64_t count,
                                    function_ref<void(Value)> body) {
  auto each = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(count), kb.idx(1));
  each->setAttr(kUnrollAttrName, b.getI64IntegerAttr(1));
  OpBuilder::InsertionGuard inEach(b);
  b.setInsertionPointToStart(each.getBody());
  Value i = each.getInductionVar();
  whether(bitOf(bits, i), [&] { body(i); });
}

Value ExtremumGradKernel::teamMask(Value cond) {
  Value mine = arith::SelectOp::create(b, loc, cond, bitMask(lane), i32c(0));
  auto bits = TeamReduceOp::create(b, loc, ValueRange{mine}, 1, kLanes);
  kb.buildCombine(bits.getCombine(), TypeRange{i32},
                  [&](OpBuilder &rb, ValueRange p, ValueRange q) {
                    return SmallVector<Value>{
                        arith::OrIOp::create(rb, loc, p[0], q[0])};
                  });
  return bits.getResult(0);
}

ExtremumGradKernel::Slice ExtremumGradKernel::slice(Value t) {
  // (One statement each: the order of a call's arguments is the compiler's.)
  Value d = kb.div(t, chunks);
  Value c = kb.rem(t, chunks);
  return slice(d, c);
}

ExtremumGradKernel::Slice ExtremumGradKernel::slice(Value d, Value c) {
  Slice s;
  s.d = d;
  s.base = kb.mul(c, kLanes);
  s.f = kb.add(s.base, lane);
  s.active = row % kLanes ? kb.lt(s.f, kb.idx(row)) : Value();
  Value fSafe = s.active
                    ? arith::SelectOp::create(b, loc, s.active, s.f, kb.idx(0))
                          .getResult()
                    : s.f;
  s.rowStart = kb.mul(s.d, row);
  s.at = kb.add(s.rowStart, fSafe);
  return s;
}

Value ExtremumGradKernel::guarded(const Slice &s, Value cond) {
  return s.active ? arith::AndIOp::create(b, loc, s.active, cond).getResult()
                  : cond;
}

Value ExtremumGradKernel::isTie(Value code) {
  return compare(arith::CmpFPredicate::ULT, code, -1.0);
}

Value ExtremumGradKernel::share(Value y, Value dy, Value code) {
  // c = -(code + 1) = -1 - code.
  Value count = arith::SubFOp::create(b, loc, kb.fp(-1.0), code);
  Value part = arith::DivFOp::create(b, loc, dy, count);
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, y, y);
  return arith::SelectOp::create(b, loc, isNaN, y, part).getResult();
}

void ExtremumGradKernel::addInto(Value nbr, Value f, Value v) {
  AtomicAddOp::create(b, loc, v, out, kb.add(kb.mul(nbr, row), f));
}

void ExtremumGradKernel::build() {
  out = kb.accumulatedResult(0);
  slices = kb.sizeValue(nodes * chunks);
  AffineExpr elementBlocks = (nodes * chunks).ceilDiv(teams);
  AffineExpr edgeBlocks = edges.ceilDiv(teams * kLanes);
  auto blocks = ForBlocksOp::create(
      b, loc, kb.sizeValue(elementBlocks + edgeBlocks), kLanes);
  Block *body = new Block();
  blocks.getBody().push_back(body);
  blk = body->addArgument(b.getIndexType(), loc);
  team = body->addArgument(b.getIndexType(), loc);
  lane = body->addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(body);
  Value n = kb.size(rows.name);
  Value meanCeil = arith::CeilDivSIOp::create(
      b, loc, kb.size("edges"),
      arith::MaxSIOp::create(b, loc, n, kb.idx(1)).getResult());
  longThreshold = arith::MaxSIOp::create(b, loc, kb.idx(block),
                                         kb.mul(meanCeil, kLongMeanDegrees));
  Value firstEdgeBlock = kb.sizeValue(elementBlocks);
  auto kind = scf::IfOp::create(b, loc, TypeRange{}, kb.lt(blk, firstEdgeBlock),
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&kind.getThenRegion().front());
    ownElements(kb.mul(blk, teams));
    b.setInsertionPointToStart(&kind.getElseRegion().front());
    Value edgeTeam = kb.add(kb.mul(kb.sub(blk, firstEdgeBlock), teams), team);
    whether(anyLongRow(),
            [&] { longRowTies(probe(kb.mul(edgeTeam, kLanes))); });
  }
  YieldOp::create(b, loc);
  LaunchOp launch = kb.finish(elementBlocks + edgeBlocks,
                              {sources.expr(group.getContext())}, parts.graph);
  group->replaceAllUsesWith(launch->getResults());
}

void ExtremumGradKernel::ownElements(Value firstTeam) {
  Value t = kb.add(firstTeam, team);
  whether(kb.lt(t, slices), [&] {
    Slice s = slice(t);
    Value code = kb.load(kb.operand(op.getWinner()), s.at).front();
    addToWinner(s, code);
    teamTies(s, code);
  });
}

void ExtremumGradKernel::addToWinner(const Slice &s, Value code) {
  whether(guarded(s, compare(arith::CmpFPredicate::OGE, code, 0.0)), [&] {
    Value winner = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        arith::FPToSIOp::create(b, loc, b.getI64Type(), code));
    whether(kb.lt(winner, kb.size(sources.name)), [&] {
      Value dy = kb.load(kb.operand(op.getGrad()), s.at).front();
      addInto(winner, s.f, dy);
    });
  });
}

void ExtremumGradKernel::teamTies(const Slice &s, Value code) {
  Value mask = teamMask(guarded(s, isTie(code)));
  whether(nonzero(mask), [&] {
    RowTraversal rt = traverse(kb, reversed, s.d);
    Value shortRow =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                              kb.sub(rt.end, rt.begin), longThreshold);
    whether(shortRow, [&] {
      forEachBit(mask, kLanes, [&](Value l) { resolveElement(s, rt, l); });
    });
  });
}

void ExtremumGradKernel::resolveElement(const Slice &s, const RowTraversal &rt,
                                        Value l) {
  Value fl = kb.add(s.base, l);
  Value atL = kb.add(s.rowStart, fl);
  Value y = kb.load(kb.operand(op.getExtremum()), atL).front();
  Value code = kb.load(kb.operand(op.getWinner()), atL).front();
  Value dy = kb.load(kb.operand(op.getGrad()), atL).front();
  Value part = share(y, dy, code);
  Value x = kb.operand(op.getInput());
  LogicalResult status = success();
  ForEdgesOp loop = edgeLoop(
      kb, rt, kb.add(rt.begin, lane), kb.idx(kLanes), {}, reversed, s.d,
      [&](const EdgeRef &e, ValueRange) -> FailureOr<SmallVector<Value>> {
        Value nbr = reversed ? e.dst : e.src;
        Value v = kb.load(x, kb.add(kb.mul(nbr, row), fl)).front();
        whether(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UEQ, v, y),
                [&] { addInto(nbr, fl, part); });
        return SmallVector<Value>{};
      },
      status);
  loop.setUnrollAttr(b.getI64IntegerAttr(4));
}

ExtremumGradKernel::EdgeAt ExtremumGradKernel::edgeAt(Value pos) {
  Value slot = reversed ? kb.loadIndex(kb.graph("csc_to_csr"), pos) : pos;
  Value src = kb.loadIndex(kb.graph("csr_col"), slot);
  Value dst = kb.loadIndex(kb.graph("csr_dst"), slot);
  return reversed ? EdgeAt{src, dst} : EdgeAt{dst, src};
}

Value ExtremumGradKernel::anyLongRow() {
  // The last node in increasing degree order has the most edges (the
  // order lists every node of the graph, a bipartite graph's other side's
  // ids too, without edges this way).
  Value n = kb.size("nodes");
  auto any = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()},
                               kb.lt(kb.idx(0), n), /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&any.getElseRegion().front());
  scf::YieldOp::create(
      b, loc,
      ValueRange{
          arith::ConstantOp::create(b, loc, b.getBoolAttr(false)).getResult()});
  b.setInsertionPointToStart(&any.getThenRegion().front());
  Value byDegree =
      kb.graph(reversed ? "csc_cols_by_degree" : "csr_rows_by_degree");
  Value densest = kb.loadIndex(byDegree, kb.sub(n, kb.idx(1)));
  RowTraversal rt = traverse(kb, reversed, densest);
  Value longRow =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                            kb.sub(rt.end, rt.begin), longThreshold);
  scf::YieldOp::create(b, loc, ValueRange{longRow});
  return any.getResult(0);
}

ExtremumGradKernel::Probe ExtremumGradKernel::probe(Value first) {
  // Each lane reads its position's edge and whether its row is long.
  Value pos = kb.add(first, lane);
  Value inGraph = kb.lt(pos, kb.size("edges"));
  Type index = b.getIndexType();
  auto probe = scf::IfOp::create(b, loc, TypeRange{b.getI1Type(), index, index},
                                 inGraph, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&probe.getElseRegion().front());
    scf::YieldOp::create(
        b, loc,
        ValueRange{
            arith::ConstantOp::create(b, loc, b.getBoolAttr(false)).getResult(),
            kb.idx(0), kb.idx(0)});
    b.setInsertionPointToStart(&probe.getThenRegion().front());
    EdgeAt e = edgeAt(pos);
    RowTraversal rt = traverse(kb, reversed, e.row);
    Value longRow =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                              kb.sub(rt.end, rt.begin), longThreshold);
    scf::YieldOp::create(b, loc, ValueRange{longRow, e.row, e.nbr});
  }
  return {first, probe.getResult(0), probe.getResult(1), probe.getResult(2)};
}

void ExtremumGradKernel::longRowTies(const Probe &p) {
  Value first = p.first, isLong = p.isLong, myRow = p.row, myNbr = p.nbr;
  Value longMask = teamMask(isLong);
  whether(nonzero(longMask), [&] {
    // One long row at a time (the row of the first position left): its
    // slices' tie elements found once, then each tested by the lanes
    // whose positions are in the row, a lane per edge.
    auto each = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(kLanes), kb.idx(1),
                                   ValueRange{longMask});
    each->setAttr(kUnrollAttrName, b.getI64IntegerAttr(1));
    OpBuilder::InsertionGuard inEach(b);
    b.setInsertionPointToStart(each.getBody());
    Value i = each.getInductionVar(), left = each.getRegionIterArg(0);
    auto taken = scf::IfOp::create(b, loc, TypeRange{i32}, bitOf(left, i),
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inTaken(b);
      b.setInsertionPointToStart(&taken.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{left});
      b.setInsertionPointToStart(&taken.getThenRegion().front());
      Value d = edgeAt(kb.add(first, i)).row;
      Value mine = arith::AndIOp::create(
          b, loc, isLong,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, myRow, d));
      rowTies(d, mine, myNbr);
      Value same = teamMask(mine);
      Value rest = arith::AndIOp::create(
          b, loc, left, arith::XOrIOp::create(b, loc, same, i32c(-1)));
      scf::YieldOp::create(b, loc, ValueRange{rest});
    }
    scf::YieldOp::create(b, loc, taken.getResults());
  });
}

void ExtremumGradKernel::rowTies(Value d, Value mine, Value nbr) {
  auto each = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(chunks), kb.idx(1));
  each->setAttr(kUnrollAttrName, b.getI64IntegerAttr(1));
  OpBuilder::InsertionGuard inEach(b);
  b.setInsertionPointToStart(each.getBody());
  Slice s = slice(d, each.getInductionVar());
  Value code = kb.load(kb.operand(op.getWinner()), s.at).front();
  Value ties = teamMask(guarded(s, isTie(code)));
  whether(nonzero(ties), [&] { tiesByElement(s, ties, mine, nbr); });
}

void ExtremumGradKernel::tiesByElement(const Slice &s, Value ties, Value mine,
                                       Value nbr) {
  Value x = kb.operand(op.getInput());
  forEachBit(ties, kLanes, [&](Value l) {
    // Element l of the slice, the same for every lane.
    Value fl = kb.add(s.base, l);
    Value atL = kb.add(s.rowStart, fl);
    Value y = kb.load(kb.operand(op.getExtremum()), atL).front();
    Value codeL = kb.load(kb.operand(op.getWinner()), atL).front();
    whether(mine, [&] {
      Value v = kb.load(x, kb.add(kb.mul(nbr, row), fl)).front();
      whether(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UEQ, v, y),
              [&] {
                Value dy = kb.load(kb.operand(op.getGrad()), atL).front();
                addInto(nbr, fl, share(y, dy, codeL));
              });
    });
  });
}

/// Lowers an extremum_grad group, alone in it: see ExtremumGradKernel.
LogicalResult mlir::gnnk::lowerExtremumGrad(KernelGroupOp group,
                                            GroupParts &parts, int indexBits) {
  if (!parts.producers.empty() || !parts.consumers.empty())
    return group.emitOpError("expects an extremum_grad group to hold the "
                             "extremum_grad alone");
  auto op = cast<gnn::ExtremumGradOp>(parts.anchor);
  FailureOr<int64_t> row = rowElements(op.getResult(), op);
  if (failed(row))
    return failure();
  ExtremumGradKernel(group, parts, op, *row, indexBits).build();
  return success();
}

void mlir::gnnk::populateExtremumGradLoweringPatterns(
    RewritePatternSet &patterns, int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::extremum_grad,
      gnn::Mapping::element_parallel, lowerExtremumGrad, indexBits);
}
