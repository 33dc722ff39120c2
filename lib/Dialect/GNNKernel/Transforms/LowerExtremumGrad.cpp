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
/// Blocks of teams of 32 lanes; team T of the grid covers 32 consecutive
/// elements (d, k) of `grad`, a lane per element, adding into the result
/// (zeroed before the launch) through `gnnk.atomic_add`. A lane reads its
/// winner code: a node id adds grad into that node's row (a code that names
/// no node, which no forward writes and the reference evaluator rejects,
/// adds nothing); -1 adds nothing. Tie codes (< -1) are resolved one
/// element at a time by walking d's row: the walkers count the edges whose
/// input equals the extremum (keeping each walker's first two), then add
/// grad / count to each (a walker with more than two walks its part again).
/// A team walks the rows of at most `block` edges itself; longer rows are
/// walked by the whole block once every team is done with its own elements
/// (a team's walk of musae-github's 3324-edge row took 21 us on an idle
/// H100, the block's 2.2 us; with team walks alone, that graph's three ties
/// made the kernel 1.7x slower than without them). Every block pays one
/// block reduction for it (pubmed's kernel: 0.019 to 0.021 ms).
///
/// Measured and not kept (bench/results/winner-codes-h100/): pulling the
/// gradient of the nodes of many edges (more than 4, 16 or 64 times the
/// mean degree) along their own edges instead of adding into their rows
/// atomically, to spare the atomic unit a hub's many additions on one
/// address: slower on every scoreboard graph (the pull reads a code row
/// per edge; musae-github's hub contention costs less). Float2 and float4
/// atomics where neighbouring elements share a winner: slower. Skipping the
/// block reduction in blocks whose rows have at most `block` edges in all
/// (two more loads per thread), and capping the registers at 40 for
/// occupancy (they spill): slower on pubmed still (all in
/// bench/results/tie-walks-h100/).
///
/// The kernel as it is built: the builder helpers its phases share, then
/// one method per phase (a team's own elements, the ties left to the
/// block, the resolution of one tie element).
class ExtremumGradKernel {
public:
  /// Lanes per team.
  static constexpr int64_t kLanes = 32;

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
  /// The walk of row `s.d` for tie element `f` (at `at`) from `first` by
  /// `step`: the input `x` and the extremum `y` the edges are compared with.
  struct TieWalk {
    const Slice &s;
    const RowTraversal &rt;
    Value first;
    int64_t step;
    Value x, f, y;
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
  /// The combine of i32 masks (a team or block reduction's).
  SmallVector<Value> bitwiseOr(OpBuilder &rb, ValueRange p, ValueRange q);

  Slice slice(Value t);
  /// `cond` where the lane's element is in the row.
  Value guarded(const Slice &s, Value cond);
  /// The slice's lanes holding a tie code, or the NaN code of a NaN
  /// extremum (unordered), as a bit mask (the same in every lane of the
  /// team).
  Value tieMask(const Slice &s, Value code);

  /// The team's own elements, in an `scf.if` on the team covering any;
  /// yields the bit of the team when it leaves ties in a long row to the
  /// block.
  Value ownElements(Value firstTeam);
  /// Adds the lane's grad into the row of the winner its code names.
  void addToWinner(const Slice &s, Value code);
  /// The ties of slice `s`: resolved by the team in a short row; yields the
  /// team's bit for a long one.
  void teamTies(const Slice &s, Value code);
  /// The teams that left ties to the block (their bits `own`, gathered
  /// uniform across the block), one at a time, the block's threads
  /// splitting the row.
  void blockTies(Value own, Value firstTeam);

  /// Resolves the ties in `mask` of slice `s`, walking d's row from `first`
  /// by `step`: by the team alone, or (`byBlock`) by the block, whose every
  /// thread must then run this.
  void resolve(const Slice &s, const RowTraversal &rt, Value mask, Value first,
               int64_t step, bool byBlock);
  /// Resolves the tie at lane `l` of slice `s` (the same for every walker).
  void resolveElement(const Slice &s, const RowTraversal &rt, Value x, Value l,
                      Value first, int64_t step, bool byBlock);
  /// Whether the edge to `nbr` attains the extremum (every edge of a NaN
  /// one: unordered).
  Value attains(const TieWalk &w, Value nbr);
  /// The row's edges split among the walkers (edgeLoop's bodies never fail
  /// here), `fn` giving the carried values after the edge to a neighbour.
  ForEdgesOp walk(const TieWalk &w, ValueRange inits,
                  function_ref<SmallVector<Value>(Value, ValueRange)> fn);
  /// One walk counts the walker's matches and keeps the first two (ties
  /// are mostly of two or three edges); only a walker with more walks
  /// again.
  ForEdgesOp countMatches(const TieWalk &w);

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
  AffineExpr nodes;
  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  Type i32;
  /// The result, and the slices (a team each).
  Value out, slices;
  Value blk, team, lane;
};
} // namespace

ExtremumGradKernel::ExtremumGradKernel(KernelGroupOp group, GroupParts &parts,
                                       gnn::ExtremumGradOp op, int64_t row,
                                       int indexBits)
    : group(group), parts(parts), op(op), row(row), reversed(op.getReversed()),
      block(group.getScheduleAttr().getBlock()), teams(block / kLanes),
      chunks((row + kLanes - 1) / kLanes),
      nodes(getAffineSymbolExpr(0, group.getContext())),
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

SmallVector<Value> ExtremumGradKernel::bitwiseOr(OpBuilder &rb, ValueRange p,
                                                 ValueRange q) {
  return SmallVector<Value>{arith::OrIOp::create(rb, loc, p[0], q[0])};
}

ExtremumGradKernel::Slice ExtremumGradKernel::slice(Value t) {
  Slice s;
  s.d = kb.div(t, chunks);
  s.base = kb.mul(kb.rem(t, chunks), kLanes);
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

Value ExtremumGradKernel::tieMask(const Slice &s, Value code) {
  Value tie = guarded(s, compare(arith::CmpFPredicate::ULT, code, -1.0));
  Value mine = arith::SelectOp::create(b, loc, tie, bitMask(lane), i32c(0));
  auto ties = TeamReduceOp::create(b, loc, ValueRange{mine}, 1, kLanes);
  kb.buildCombine(ties.getCombine(), TypeRange{i32},
                  [&](OpBuilder &rb, ValueRange p, ValueRange q) {
                    return bitwiseOr(rb, p, q);
                  });
  return ties.getResult(0);
}

void ExtremumGradKernel::build() {
  out = kb.accumulatedResult(0);
  slices = kb.sizeValue(nodes * chunks);
  auto blocks = ForBlocksOp::create(
      b, loc, arith::CeilDivSIOp::create(b, loc, slices, kb.idx(teams)),
      kLanes);
  Block *body = new Block();
  blocks.getBody().push_back(body);
  blk = body->addArgument(b.getIndexType(), loc);
  team = body->addArgument(b.getIndexType(), loc);
  lane = body->addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(body);
  Value firstTeam = kb.mul(blk, teams);
  Value left = ownElements(firstTeam);
  blockTies(left, firstTeam);
  YieldOp::create(b, loc);
  LaunchOp launch =
      kb.finish((nodes * chunks).ceilDiv(teams), {nodes}, parts.graph);
  group->replaceAllUsesWith(launch->getResults());
}

Value ExtremumGradKernel::ownElements(Value firstTeam) {
  Value t = kb.add(firstTeam, team);
  auto own = scf::IfOp::create(b, loc, TypeRange{i32}, kb.lt(t, slices),
                               /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&own.getElseRegion().front());
  scf::YieldOp::create(b, loc, i32c(0));
  b.setInsertionPointToStart(&own.getThenRegion().front());
  Slice s = slice(t);
  Value code = kb.load(kb.operand(op.getWinner()), s.at).front();
  addToWinner(s, code);
  teamTies(s, code);
  return own.getResult(0);
}

void ExtremumGradKernel::addToWinner(const Slice &s, Value code) {
  whether(guarded(s, compare(arith::CmpFPredicate::OGE, code, 0.0)), [&] {
    Value winner = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        arith::FPToSIOp::create(b, loc, b.getI64Type(), code));
    whether(kb.lt(winner, kb.size("nodes")), [&] {
      Value dy = kb.load(kb.operand(op.getGrad()), s.at).front();
      AtomicAddOp::create(b, loc, dy, out, kb.add(kb.mul(winner, row), s.f));
    });
  });
}

void ExtremumGradKernel::teamTies(const Slice &s, Value code) {
  Value mask = tieMask(s, code);
  auto some = scf::IfOp::create(b, loc, TypeRange{i32}, nonzero(mask),
                                /*withElseRegion=*/true);
  b.setInsertionPointToStart(&some.getElseRegion().front());
  scf::YieldOp::create(b, loc, i32c(0));
  b.setInsertionPointToStart(&some.getThenRegion().front());
  RowTraversal rt = traverse(kb, reversed, s.d);
  auto degree = [&](const RowTraversal &r) { return kb.sub(r.end, r.begin); };
  Value longRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                        degree(rt), kb.idx(block));
  Value shortRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                         degree(rt), kb.idx(block));
  whether(shortRow, [&] {
    resolve(s, rt, mask, kb.add(rt.begin, lane), kLanes, /*byBlock=*/false);
  });
  scf::YieldOp::create(
      b, loc,
      arith::SelectOp::create(b, loc, longRow, bitMask(team), i32c(0))
          .getResult());
  b.setInsertionPointAfter(some);
  scf::YieldOp::create(b, loc, some.getResult(0));
}

void ExtremumGradKernel::blockTies(Value own, Value firstTeam) {
  auto leftRed = BlockReduceOp::create(b, loc, ValueRange{own});
  kb.buildCombine(leftRed.getCombine(), TypeRange{i32},
                  [&](OpBuilder &rb, ValueRange p, ValueRange q) {
                    return bitwiseOr(rb, p, q);
                  });
  Value left = leftRed.getResult(0);
  forEachBit(left, teams, [&](Value other) {
    Slice s = slice(kb.add(firstTeam, other));
    Value code = kb.load(kb.operand(op.getWinner()), s.at).front();
    Value mask = tieMask(s, code);
    RowTraversal rt = traverse(kb, reversed, s.d);
    Value first = kb.add(rt.begin, kb.add(kb.mul(team, kLanes), lane));
    resolve(s, rt, mask, first, block, /*byBlock=*/true);
  });
}

void ExtremumGradKernel::resolve(const Slice &s, const RowTraversal &rt,
                                 Value mask, Value first, int64_t step,
                                 bool byBlock) {
  Value x = kb.operand(op.getInput());
  // One element at a time, the same for every walker.
  forEachBit(mask, kLanes, [&](Value l) {
    resolveElement(s, rt, x, l, first, step, byBlock);
  });
}

Value ExtremumGradKernel::attains(const TieWalk &w, Value nbr) {
  Value v = kb.load(w.x, kb.add(kb.mul(nbr, row), w.f)).front();
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UEQ, v, w.y)
      .getResult();
}

ForEdgesOp ExtremumGradKernel::walk(
    const TieWalk &w, ValueRange inits,
    function_ref<SmallVector<Value>(Value, ValueRange)> fn) {
  LogicalResult status = success();
  ForEdgesOp loop = edgeLoop(
      kb, w.rt, w.first, kb.idx(w.step), inits, reversed, w.s.d,
      [&](const EdgeRef &e, ValueRange acc) -> FailureOr<SmallVector<Value>> {
        return fn(reversed ? e.dst : e.src, acc);
      },
      status);
  loop.setUnrollAttr(b.getI64IntegerAttr(4));
  return loop;
}

ForEdgesOp ExtremumGradKernel::countMatches(const TieWalk &w) {
  return walk(
      w, {kb.fp(0.0), kb.idx(0), kb.idx(0)}, [&](Value nbr, ValueRange acc) {
        Value hit = attains(w, nbr);
        Value one =
            arith::SelectOp::create(b, loc, hit, kb.fp(1.0), kb.fp(0.0));
        Value isFirst = arith::AndIOp::create(
            b, loc, hit, compare(arith::CmpFPredicate::OEQ, acc[0], 0.0));
        Value isSecond = arith::AndIOp::create(
            b, loc, hit, compare(arith::CmpFPredicate::OEQ, acc[0], 1.0));
        SmallVector<Value> next;
        next.push_back(arith::AddFOp::create(b, loc, acc[0], one));
        next.push_back(arith::SelectOp::create(b, loc, isFirst, nbr, acc[1]));
        next.push_back(arith::SelectOp::create(b, loc, isSecond, nbr, acc[2]));
        return next;
      });
}

void ExtremumGradKernel::resolveElement(const Slice &s, const RowTraversal &rt,
                                        Value x, Value l, Value first,
                                        int64_t step, bool byBlock) {
  Value fl = kb.add(s.base, l);
  Value atL = kb.add(s.rowStart, fl);
  Value y = kb.load(kb.operand(op.getExtremum()), atL).front();
  TieWalk w{s, rt, first, step, x, fl, y};
  ForEdgesOp count = countMatches(w);
  Value matches = count.getResult(0);
  auto sum = [&](OpBuilder &rb, ValueRange p, ValueRange q) {
    return SmallVector<Value>{arith::AddFOp::create(rb, loc, p[0], q[0])};
  };
  auto teamTotal = TeamReduceOp::create(b, loc, ValueRange{matches}, 1, kLanes);
  kb.buildCombine(teamTotal.getCombine(), TypeRange{kb.ft}, sum);
  Value total = teamTotal.getResult(0);
  if (byBlock) {
    auto blockTotal = BlockReduceOp::create(b, loc, ValueRange{total});
    kb.buildCombine(blockTotal.getCombine(), TypeRange{kb.ft}, sum);
    total = blockTotal.getResult(0);
  }
  Value dyL = kb.load(kb.operand(op.getGrad()), atL).front();
  // NaN for a NaN extremum, as torch's scatter_reduce (0 * dy / 0).
  Value share = arith::DivFOp::create(b, loc, dyL, total);
  share = arith::SelectOp::create(
      b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, y, y), y,
      share);
  auto addTo = [&](Value nbr) {
    AtomicAddOp::create(b, loc, share, out, kb.add(kb.mul(nbr, row), fl));
  };
  whether(compare(arith::CmpFPredicate::OGE, matches, 1.0),
          [&] { addTo(count.getResult(1)); });
  whether(compare(arith::CmpFPredicate::OGE, matches, 2.0),
          [&] { addTo(count.getResult(2)); });
  whether(compare(arith::CmpFPredicate::OGT, matches, 2.0), [&] {
    // The walker's matches after its first two.
    walk(w, {kb.fp(0.0)}, [&](Value nbr, ValueRange seen) {
      Value hit = attains(w, nbr);
      whether(
          arith::AndIOp::create(
              b, loc, hit, compare(arith::CmpFPredicate::OGE, seen[0], 2.0)),
          [&] { addTo(nbr); });
      Value one = arith::SelectOp::create(b, loc, hit, kb.fp(1.0), kb.fp(0.0));
      return SmallVector<Value>{arith::AddFOp::create(b, loc, seen[0], one)};
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
