//===- LowerAttention.cpp - fused attention groups to one gnnk kernel -----===//
//
// Part of gnnc. A group `sddmm -> score ops -> edge_softmax -> scaling ops
// -> spmm sum -> consumers` becomes one row-parallel kernel with an online
// softmax: per destination row a team of lanes walks the row's edges once,
// computing each edge's per-head score, and carries, per chunk of features
// it owns, the running maximum `m`, normaliser `s` and weighted sum `acc`:
//
//   m' = max(m, x);  s' = s e^(m - m') + e^(x - m');
//   acc' = acc e^(m - m') + e^(x - m') v
//
// (one of the two exponentials is e^0 = 1: the kernel computes one per edge,
// e^-|x - m|).
//
// The same rule, as the loop's merge region, combines the partial results of
// edge groups (and of heavy-row chunks), so no edge-sized buffer exists.
//
// Ops scaling the softmax weights before the spmm (attention dropout's
// `alpha * mask`, linear in alpha) multiply only what is accumulated:
// acc' = acc e^(m - m') + e^(x - m') mask v, while s stays the normaliser of
// the unscaled softmax, so out = sum (alpha mask) v and the log-sum-exp is
// the softmax's. The state and merge rule are unchanged, hence so is the
// heavy-row split.
//
// Scores are computed distributed over the lanes when the sddmm's operands
// are shaped like the aggregated rows (each lane takes its features'
// products, a team reduction sums a head's lanes); otherwise each lane
// evaluates its heads' scores whole.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"
#include "gnn/Dialect/GNN/Transforms/ScaledOperand.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gnnk;
using gnn::KernelGroupOp;

bool mlir::gnnk::isSumReduction(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  BlockArgument out = body.getArgument(generic.getNumDpsInputs());
  Value term = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  // The term must not depend on the accumulator.
  SmallVector<Value> work = {term};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == out)
      return false;
    if (Operation *def = v.getDefiningOp())
      if (def->getBlock() == &body)
        llvm::append_range(work, def->getOperands());
  }
  return out.hasOneUse();
}

namespace {

/// The mean in-degree from which bf16 and f16 attention loops take four
/// edges a step (see chooseEdgesPerStep).
constexpr int64_t kLongRows = 128;

/// The ops of an attention group and how a row team covers its rows, all
/// checked before anything is built.
struct AttentionGroup {
  gnn::SpmmOp spmm;
  gnn::SddmmOp sddmm;
  gnn::EdgeSoftmaxOp softmax;
  /// The ops scaling the softmax's weights (attention dropout's `alpha *
  /// mask`), in order, and the weights they give the spmm.
  ArrayRef<Operation *> scalingOps;
  Value weights;
  /// The first score op when it sums the sddmm's per-feature terms over the
  /// features (a distributed add/sub/mul score), else null.
  linalg::GenericOp featureReduce;
  /// Whether each lane computes its features' part of the scores (a dot
  /// sddmm, or `featureReduce`) rather than its heads' scores whole.
  bool dotDistributed = false, distributed = false;
  /// The aggregated values (the spmm's input).
  Value input;
  /// Elements per row, features per head, heads per row.
  int64_t row = 0, inner = 0, heads = 0;
  gnn::ScheduleAttr schedule;
  int64_t lanes = 1, vec = 1;
  /// The partition of a row over the team (see LanePartition).
  int64_t fl = 1, groups = 1, chunk = 1, chunks = 1;
  /// Values carried per chunk by the online softmax: m, s, acc[vec].
  int64_t perChunk = 0;

  /// The attention group of `group`; emits a diagnostic when its ops or
  /// shapes are not those of one.
  static FailureOr<AttentionGroup> match(KernelGroupOp group,
                                         GroupParts &parts);

private:
  /// Finds the pipeline's ops and collects its score ops.
  LogicalResult matchOps(KernelGroupOp group, GroupParts &parts,
                         SmallVectorImpl<linalg::GenericOp> &scoreOps);
  /// Whether the ops found make an attention pipeline (`scaled`: the
  /// scaling ops, if any, scale the softmax's weights).
  bool isPipeline(bool scaled);
  /// Reads the row shape and partitions it over the schedule's row team.
  LogicalResult matchShapes(KernelGroupOp group);
  /// Decides how scores are computed (distributed or whole).
  void matchScores(ArrayRef<linalg::GenericOp> scoreOps);
};

/// Builds the kernel of an attention group, phase by phase: the row team's
/// mapping, the edge loop (scores, scaling factors, online softmax update),
/// the merge of the edge groups' states, and the outputs.
class AttentionLowering : AttentionGroup {
public:
  AttentionLowering(KernelGroupOp group, GroupParts &parts,
                    const AttentionGroup &attention, int indexBits)
      : AttentionGroup(attention), group(group), parts(parts),
        kb(group, group.getKernel(), attention.schedule.getBlock(), indexBits),
        b(kb.b), loc(kb.loc), ft(kb.ft) {}

  /// Builds the kernel and the launch replacing the group.
  LogicalResult lower();

private:
  /// Edges a step of the edge loop, by the aggregated values' type.
  int64_t chooseEdgesPerStep() const;
  /// Opens the row mapping: the lanes' roles, the row's edges, each chunk's
  /// features, and the loop-invariant operands of distributed scores.
  void mapRow();
  /// The edge loop carrying each chunk's online softmax state.
  FailureOr<ForEdgesOp> buildEdgeLoop();
  /// Fills `region` with a block of `edges` edges: the state after them.
  LogicalResult buildEdgeBlock(Region &region, int64_t edges);
  /// The edges `es` taken together: all their rows are loaded and their
  /// scores computed (one team reduction for all) before the state takes
  /// them in one update. One edge is the loop's plain step.
  FailureOr<SmallVector<Value>> edgeStep(ArrayRef<EdgeRef> es,
                                         ValueRange carried);
  /// Each chunk's head's score at each edge of `es` (`vRows[k]` the rows
  /// of edge k), the lanes computing them together.
  FailureOr<SmallVector<SmallVector<Value>>>
  distributedScores(ArrayRef<EdgeRef> es,
                    ArrayRef<SmallVector<SmallVector<Value>>> vRows);
  /// This lane's part of chunk `j`'s score: the sum over its features.
  FailureOr<Value> chunkPartialScore(int64_t j, Value slot, Value src,
                                     ArrayRef<SmallVector<Value>> vRows);
  /// `partial` plus the featureReduce body's term for feature `v` of chunk
  /// `j`, the sddmm giving `x` (source side) and `z` (destination side).
  FailureOr<Value> addFeatureTerm(int64_t j, int64_t v, Value x, Value z,
                                  Value slot, Value partial);
  /// Sums the lanes' (and chunks') partial scores of each head; `scores`
  /// holds the chunks of one edge after another.
  void sumHeadScores(SmallVector<Value> &scores);
  /// The same for one edge's heads whose lane count is not a power of two.
  void sumStraddlingHeadScores(MutableArrayRef<Value> scores);
  /// A team reduction adding `values` over groups of `width` lanes.
  TeamReduceOp teamSum(ValueRange values, int64_t width);
  /// Each chunk's head's score at `e`, evaluated whole by the lane.
  FailureOr<SmallVector<Value>> wholeScores(EdgeEvaluator &eval,
                                            const EdgeRef &e);
  /// The factor scaling each chunk's head's softmax weight at `e` (none
  /// without scaling ops).
  FailureOr<SmallVector<Value>> scalingFactors(EdgeEvaluator &eval,
                                               const EdgeRef &e);
  /// exp(x) for the online softmax: the hardware's approximation (`afn`,
  /// printed `__expf`) where the aggregated values are stored in bf16 or
  /// f16, whose rounding (2^-9, 2^-12 relative) is far above its error for
  /// the softmax's arguments (x <= 0: 2 + 1.2|x| ulps of f32, about 1.4e-5
  /// relative at x = -100, where the weight is e^-100 and adds nothing);
  /// libdevice's `expf` for f32 and f64.
  Value softmaxExp(OpBuilder &rb, Value x);
  /// The online softmax update of the `carried` state by one edge.
  SmallVector<Value> updateState(ValueRange carried, ArrayRef<Value> scores,
                                 ArrayRef<Value> factors,
                                 ArrayRef<SmallVector<Value>> vRows);
  /// The same by several edges at once (`scores[k]`, `factors[k]`,
  /// `vRows[k]` those of edge k): the accumulators rescaled once.
  SmallVector<Value>
  updateStateGroup(ValueRange carried,
                   ArrayRef<SmallVector<Value>> scores,
                   ArrayRef<SmallVector<Value>> factors,
                   ArrayRef<SmallVector<SmallVector<Value>>> vRows);
  /// The merge rule of two partial states (edge groups, heavy-row chunks).
  SmallVector<Value> mergeStates(OpBuilder &rb, ValueRange a, ValueRange c);
  /// The loop's merge region, and the state of the whole row team.
  SmallVector<Value> mergeEdgeGroups(ForEdgesOp loop);
  /// Stores each chunk's output and the heads' log-sum-exp.
  LogicalResult storeOutputs(ValueRange state);
  /// The same for chunk `j`.
  LogicalResult storeChunk(int64_t j, ValueRange state, Value leader,
                           Value hasEdges, Value noMassOut);

  KernelGroupOp group;
  GroupParts &parts;
  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  Type ft;
  /// The types of the state carried by the edge loop.
  SmallVector<Type> types;
  /// Edges a step of the edge loop (gnnk.for_edges' group).
  int64_t edgesPerStep = 1;
  /// The row (destination node), the lane's edge group, the row's edges.
  Value rowIdx, edgeGroup, nbrs, begin, end;
  /// Per chunk: the first feature of the lane, and whether the lane holds
  /// one (null when every lane does).
  SmallVector<Value> offsets, active;
  /// Per chunk: the destination side of a distributed score.
  SmallVector<SmallVector<Value>> dstRows;
};

} // namespace

/// Follows `weights` through `scalingOps`; false when one of them is not an
/// elementwise op scaling it.
static bool followScaling(ArrayRef<Operation *> scalingOps, Value &weights) {
  for (Operation *op : scalingOps) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    OpOperand *read = nullptr;
    if (generic)
      for (OpOperand *in : generic.getDpsInputOperands())
        if (in->get() == weights)
          read = in;
    if (!read || !gnn::isScaledOperand(generic, *read) ||
        !generic.getMatchingIndexingMap(read).isIdentity() ||
        generic.getNumReductionLoops() != 0 ||
        generic->getResult(0).getType() != weights.getType())
      return false;
    weights = generic->getResult(0);
  }
  return true;
}

/// Whether the first of `scoreOps` sums the features of an add/sub/mul
/// `sddmm` (whose operands are shaped like the rows of `vType`).
static bool isFeatureReduction(gnn::SddmmOp sddmm,
                               ArrayRef<linalg::GenericOp> scoreOps,
                               RankedTensorType vType) {
  if (sddmm.getKind() == gnn::SddmmKind::dot || scoreOps.empty())
    return false;
  linalg::GenericOp first = scoreOps.front();
  return first.getNumReductionLoops() == 1 && vType.getRank() >= 2 &&
         isSumReduction(first) &&
         first.getDpsInputOperand(0)->get() == sddmm.getResult() &&
         first.getMatchingIndexingMap(first.getDpsInputOperand(0)).isIdentity();
}

LogicalResult
AttentionGroup::matchOps(KernelGroupOp group, GroupParts &parts,
                         SmallVectorImpl<linalg::GenericOp> &scoreOps) {
  spmm = cast<gnn::SpmmOp>(parts.anchor);
  // The pipeline: sddmm, score ops, edge_softmax, the spmm.
  sddmm = parts.producers.empty()
              ? gnn::SddmmOp()
              : dyn_cast<gnn::SddmmOp>(parts.producers.front());
  // The softmax is followed by the ops scaling its weights (attention
  // dropout's `alpha * mask`), if any.
  auto softmaxIt = llvm::find_if(parts.producers, [](Operation *op) {
    return isa<gnn::EdgeSoftmaxOp>(op);
  });
  softmax = softmaxIt == parts.producers.end()
                ? gnn::EdgeSoftmaxOp()
                : cast<gnn::EdgeSoftmaxOp>(*softmaxIt);
  scalingOps = softmax
                   ? ArrayRef(parts.producers)
                         .drop_front(softmaxIt - parts.producers.begin() + 1)
                   : ArrayRef<Operation *>();
  weights = softmax ? softmax.getResult() : Value();
  bool scaled = followScaling(scalingOps, weights);
  if (!isPipeline(scaled))
    return group.emitOpError("expects an attention group: sddmm, score ops, "
                             "edge_softmax, ops scaling it and an spmm sum "
                             "weighted by the result");
  for (Operation *op :
       ArrayRef(parts.producers)
           .drop_front()
           .take_front(softmaxIt - parts.producers.begin() - 1)) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      return op->emitOpError("is not an elementwise score op of an "
                             "attention group");
    scoreOps.push_back(generic);
  }
  return success();
}

bool AttentionGroup::isPipeline(bool scaled) {
  return sddmm && softmax && scaled && spmm.getWeights() == weights &&
         spmm.getReduce() == gnn::ReduceKind::sum && !spmm.getReversed() &&
         !softmax.getReversed() && !sddmm.getReversed();
}

LogicalResult AttentionGroup::matchShapes(KernelGroupOp group) {
  input = spmm.getInput();
  auto vType = cast<RankedTensorType>(input.getType());
  FailureOr<int64_t> rowOr = rowElements(spmm.getResult(), spmm);
  if (failed(rowOr))
    return failure();
  row = *rowOr;
  inner = vType.getShape().back(); // features per head
  schedule = group.getScheduleAttr();
  lanes = schedule.getLanes();
  vec = schedule.getVector();
  if (inner % vec)
    return spmm.emitOpError() << "has heads of " << inner
                              << " features, not a multiple of the schedule's "
                                 "vector width "
                              << vec;
  LanePartition part = partitionRow(row, lanes, vec);
  fl = part.featureLanes;
  groups = part.groups;
  chunk = part.chunk;
  chunks = part.chunks;
  perChunk = 2 + vec;
  constexpr int64_t kMaxChunks = 8;
  if (chunks > kMaxChunks)
    return spmm.emitOpError() << "has rows of " << row
                              << " elements; fused attention keeps at most "
                              << kMaxChunks * chunk << " per row team";
  heads = row / inner;
  return success();
}

void AttentionGroup::matchScores(ArrayRef<linalg::GenericOp> scoreOps) {
  // Distributed scores: the sddmm's operands are shaped like the aggregated
  // rows; for add/sub/mul the first score op must sum over the features.
  auto vType = cast<RankedTensorType>(input.getType());
  auto lhsType = cast<RankedTensorType>(sddmm.getLhs().getType());
  bool sameShape =
      lhsType.getShape().drop_front() == vType.getShape().drop_front();
  dotDistributed = sameShape && sddmm.getKind() == gnn::SddmmKind::dot;
  if (sameShape && isFeatureReduction(sddmm, scoreOps, vType))
    featureReduce = scoreOps.front();
  distributed = dotDistributed || featureReduce;
}

FailureOr<AttentionGroup> AttentionGroup::match(KernelGroupOp group,
                                                GroupParts &parts) {
  AttentionGroup a;
  SmallVector<linalg::GenericOp> scoreOps;
  if (failed(a.matchOps(group, parts, scoreOps)) ||
      failed(a.matchShapes(group)))
    return failure();
  a.matchScores(scoreOps);
  return a;
}

void AttentionLowering::mapRow() {
  auto [node, lane] = rowMapping(
      kb, kb.size(traversalRows(parts.graph, /*reversed=*/false).name), lanes);
  rowIdx = node;
  edgeGroup = kb.div(lane, fl);
  Value f = kb.rem(lane, fl);
  RowTraversal t = traverse(kb, /*reversed=*/false, rowIdx);
  nbrs = t.nbrs;
  begin = t.begin;
  end = t.end;
  for (int64_t j = 0; j < chunks; ++j) {
    Value c = kb.add(kb.idx(j * chunk), kb.mul(f, vec));
    offsets.push_back(c);
    active.push_back((j + 1) * chunk <= row ? Value() : kb.lt(c, kb.idx(row)));
    if (active.back())
      offsets.back() = arith::SelectOp::create(b, loc, active.back(), c,
                                               kb.idx(0));
  }
  // Destination-side operands of a distributed score are loop-invariant.
  Value sddmmDstOperand = sddmm.getRhs();
  if (distributed)
    for (int64_t j = 0; j < chunks; ++j)
      dstRows.push_back(kb.load(kb.operand(sddmmDstOperand),
                                kb.add(kb.mul(rowIdx, row), offsets[j]), vec));
}

FailureOr<ForEdgesOp> AttentionLowering::buildEdgeLoop() {
  // Carried per chunk: m, s, acc[vec].
  float inf = std::numeric_limits<float>::infinity();
  SmallVector<Value> inits;
  for (int64_t j = 0; j < chunks; ++j) {
    inits.push_back(kb.fp(-inf));
    for (int64_t i = 1; i < perChunk; ++i)
      inits.push_back(kb.fp(0.0));
  }
  types.assign(inits.size(), ft);
  // Edges taken a group at a time are not unrolled further.
  bool grouped = edgesPerStep > 1;
  auto loop = ForEdgesOp::create(
      b, loc, types, kb.add(begin, edgeGroup), end, kb.idx(groups), nbrs,
      Value(), inits, grouped ? IntegerAttr() : b.getI64IntegerAttr(2),
      grouped ? b.getI64IntegerAttr(edgesPerStep) : IntegerAttr());
  if (failed(buildEdgeBlock(loop.getBody(), edgesPerStep)) ||
      (grouped && failed(buildEdgeBlock(loop.getRest(), 1))))
    return failure();
  return loop;
}

LogicalResult AttentionLowering::buildEdgeBlock(Region &region,
                                                int64_t edges) {
  Block *body = new Block();
  region.push_back(body);
  SmallVector<EdgeRef> es;
  for (int64_t k = 0; k < edges; ++k) {
    Value slot = body->addArgument(b.getIndexType(), loc);
    Value src = body->addArgument(b.getIndexType(), loc);
    es.push_back(EdgeRef{slot, src, rowIdx});
  }
  for (Type t : types)
    body->addArgument(t, loc);
  ValueRange carried = body->getArguments().drop_front(2 * edges);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  FailureOr<SmallVector<Value>> next = edgeStep(es, carried);
  if (failed(next))
    return failure();
  YieldOp::create(b, loc, *next);
  return success();
}

FailureOr<SmallVector<Value>>
AttentionLowering::edgeStep(ArrayRef<EdgeRef> es, ValueRange carried) {
  // Every edge's rows first, so that their loads are in flight together.
  SmallVector<SmallVector<SmallVector<Value>>> vRows(es.size());
  for (auto [k, e] : llvm::enumerate(es))
    for (int64_t j = 0; j < chunks; ++j)
      vRows[k].push_back(kb.load(kb.operand(input),
                                 kb.add(kb.mul(e.src, row), offsets[j]), vec));
  // The score of each chunk's head, then the scaling factors, per edge.
  SmallVector<SmallVector<Value>> scores, factors;
  if (distributed) {
    FailureOr<SmallVector<SmallVector<Value>>> d = distributedScores(es, vRows);
    if (failed(d))
      return failure();
    scores = std::move(*d);
  } else {
    for (const EdgeRef &e : es) {
      EdgeEvaluator eval(kb, group);
      FailureOr<SmallVector<Value>> w = wholeScores(eval, e);
      if (failed(w))
        return failure();
      scores.push_back(std::move(*w));
    }
  }
  for (const EdgeRef &e : es) {
    EdgeEvaluator eval(kb, group);
    FailureOr<SmallVector<Value>> f = scalingFactors(eval, e);
    if (failed(f))
      return failure();
    factors.push_back(std::move(*f));
  }
  if (es.size() == 1)
    return updateState(carried, scores[0], factors[0], vRows[0]);
  return updateStateGroup(carried, scores, factors, vRows);
}

FailureOr<SmallVector<SmallVector<Value>>> AttentionLowering::distributedScores(
    ArrayRef<EdgeRef> es, ArrayRef<SmallVector<SmallVector<Value>>> vRows) {
  // Every edge's partial scores, then one reduction over the lanes for all.
  SmallVector<Value> flat;
  for (auto [k, e] : llvm::enumerate(es))
    for (int64_t j = 0; j < chunks; ++j) {
      FailureOr<Value> partial = chunkPartialScore(j, e.slot, e.src, vRows[k]);
      if (failed(partial))
        return failure();
      flat.push_back(*partial);
    }
  sumHeadScores(flat);
  // The rest of the score chain, per edge and head.
  Value reduced = dotDistributed ? Value(sddmm.getResult())
                                 : Value(featureReduce->getResult(0));
  double init = 0.0;
  if (featureReduce) {
    std::optional<double> c =
        KernelBuilder::fillConstant(featureReduce.getDpsInitOperand(0)->get());
    if (!c)
      return featureReduce.emitOpError("expects a constant-filled init "
                                       "for a fused score reduction");
    init = *c;
  }
  SmallVector<SmallVector<Value>> scores;
  for (auto [k, e] : llvm::enumerate(es)) {
    EdgeEvaluator eval(kb, group);
    SmallVector<Value> &edge = scores.emplace_back();
    for (int64_t j = 0; j < chunks; ++j) {
      Value head = kb.div(offsets[j], inner);
      Value sum = flat[k * chunks + j];
      Value score =
          init == 0.0
              ? sum
              : arith::AddFOp::create(b, loc, sum, kb.fp(init)).getResult();
      eval.setOverride(reduced, score);
      FailureOr<Value> final = eval.element(softmax.getInput(), e, head);
      if (failed(final))
        return failure();
      edge.push_back(*final);
    }
  }
  return scores;
}

FailureOr<Value>
AttentionLowering::chunkPartialScore(int64_t j, Value slot, Value src,
                                     ArrayRef<SmallVector<Value>> vRows) {
  Value lhs = sddmm.getLhs();
  SmallVector<Value> l =
      lhs == input
          ? vRows[j]
          : kb.load(kb.operand(lhs), kb.add(kb.mul(src, row), offsets[j]), vec);
  Value partial = kb.fp(0.0);
  for (int64_t v = 0; v < vec; ++v) {
    Value x = l[v], z = dstRows[j][v];
    if (dotDistributed) {
      partial = math::FmaOp::create(b, loc, x, z, partial);
      continue;
    }
    FailureOr<Value> next = addFeatureTerm(j, v, x, z, slot, partial);
    if (failed(next))
      return failure();
    partial = *next;
  }
  return partial;
}

FailureOr<Value> AttentionLowering::addFeatureTerm(int64_t j, int64_t v,
                                                   Value x, Value z, Value slot,
                                                   Value partial) {
  Value ev;
  switch (sddmm.getKind()) {
  case gnn::SddmmKind::add:
    ev = arith::AddFOp::create(b, loc, x, z);
    break;
  case gnn::SddmmKind::sub:
    ev = arith::SubFOp::create(b, loc, x, z);
    break;
  default:
    ev = arith::MulFOp::create(b, loc, x, z);
    break;
  }
  // The reduction body with this feature's loop indices.
  auto outType = cast<RankedTensorType>(
      featureReduce.getDpsInputOperand(0)->get().getType());
  Value k = kb.add(offsets[j], kb.idx(v));
  SmallVector<Value> idx = kb.rowIndices(slot, k, outType);
  SmallVector<Value> args = {ev};
  // getDpsInputOperands() returns a vector by value: keep it alive
  // for the loop (drop_begin only refers to it).
  SmallVector<OpOperand *> inputs = featureReduce.getDpsInputOperands();
  for (OpOperand *in : llvm::drop_begin(inputs)) {
    FailureOr<Value> a =
        kb.access(in->get(), featureReduce.getMatchingIndexingMap(in), idx,
                  featureReduce);
    if (failed(a))
      return failure();
    args.push_back(*a);
  }
  args.push_back(partial);
  FailureOr<SmallVector<Value>> y = kb.inlineBody(featureReduce, args, idx);
  if (failed(y))
    return failure();
  return (*y)[0];
}

TeamReduceOp AttentionLowering::teamSum(ValueRange values, int64_t width) {
  auto red = TeamReduceOp::create(b, loc, values, 1, width);
  kb.buildCombine(red.getCombine(), SmallVector<Type>(values.size(), ft),
                  [&](OpBuilder &rb, ValueRange a, ValueRange c) {
                    SmallVector<Value> out;
                    for (auto [x, y] : llvm::zip(a, c))
                      out.push_back(arith::AddFOp::create(rb, loc, x, y));
                    return out;
                  });
  return red;
}

void AttentionLowering::sumHeadScores(SmallVector<Value> &scores) {
  // A head's lanes (and, for heads wider than a chunk, its chunks).
  int64_t lanesPerHead = std::min(inner / vec, fl);
  int64_t chunksPerHead = std::max<int64_t>(1, inner / chunk);
  int64_t edges = static_cast<int64_t>(scores.size()) / chunks;
  if (lanesPerHead > 1 && !llvm::isPowerOf2_64(lanesPerHead)) {
    for (int64_t k = 0; k < edges; ++k)
      sumStraddlingHeadScores(
          MutableArrayRef<Value>(scores).slice(k * chunks, chunks));
    return;
  }
  if (lanesPerHead > 1) {
    TeamReduceOp red = teamSum(scores, lanesPerHead);
    scores.assign(red.getResults().begin(), red.getResults().end());
  }
  if (chunksPerHead > 1)
    for (int64_t k = 0; k < edges; ++k) {
      MutableArrayRef<Value> edge =
          MutableArrayRef<Value>(scores).slice(k * chunks, chunks);
      for (int64_t j = 0; j < chunks; j += chunksPerHead) {
        Value sum = edge[j];
        for (int64_t q = 1; q < chunksPerHead && j + q < chunks; ++q)
          sum = arith::AddFOp::create(b, loc, sum, edge[j + q]);
        for (int64_t q = 0; q < chunksPerHead && j + q < chunks; ++q)
          edge[j + q] = sum;
      }
    }
}

void AttentionLowering::sumStraddlingHeadScores(MutableArrayRef<Value> scores) {
  // Heads of a lane count that is not a power of two (e.g. 3 features) are
  // not aligned to shuffle groups and may straddle chunks: each lane sums its
  // chunks per head (masked by the head and by activity), one reduction over
  // the feature lanes gives every head's score, and each chunk takes its own
  // head's.
  SmallVector<Value> headOf, perHead;
  for (int64_t j = 0; j < chunks; ++j)
    headOf.push_back(kb.div(offsets[j], inner));
  auto isHead = [&](int64_t j, int64_t h) {
    Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     headOf[j], kb.idx(h));
    if (active[j])
      is = arith::AndIOp::create(b, loc, is, active[j]);
    return is;
  };
  for (int64_t h = 0; h < heads; ++h) {
    Value sum = kb.fp(0.0);
    for (int64_t j = 0; j < chunks; ++j)
      sum = arith::AddFOp::create(
          b, loc, sum,
          arith::SelectOp::create(b, loc, isHead(j, h), scores[j], kb.fp(0.0)));
    perHead.push_back(sum);
  }
  TeamReduceOp red = teamSum(perHead, fl);
  for (int64_t j = 0; j < chunks; ++j) {
    Value score = kb.fp(0.0);
    for (int64_t h = 0; h < heads; ++h)
      score = arith::SelectOp::create(b, loc, isHead(j, h), red.getResult(h),
                                      score);
    scores[j] = score;
  }
}

FailureOr<SmallVector<Value>>
AttentionLowering::wholeScores(EdgeEvaluator &eval, const EdgeRef &e) {
  SmallVector<Value> scores;
  for (int64_t j = 0; j < chunks; ++j) {
    FailureOr<Value> sc =
        eval.element(softmax.getInput(), e, kb.div(offsets[j], inner));
    if (failed(sc))
      return failure();
    scores.push_back(*sc);
  }
  return scores;
}

FailureOr<SmallVector<Value>>
AttentionLowering::scalingFactors(EdgeEvaluator &eval, const EdgeRef &e) {
  // The scaling ops evaluated at weight 1, as they are linear in it (the
  // dropout mask). The softmax's state (m, s) stays that of the unscaled
  // weights.
  SmallVector<Value> factors;
  if (scalingOps.empty())
    return factors;
  eval.setOverride(softmax.getResult(), kb.fp(1.0));
  for (int64_t j = 0; j < chunks; ++j) {
    FailureOr<Value> factor =
        eval.element(weights, e, kb.div(offsets[j], inner));
    if (failed(factor))
      return failure();
    factors.push_back(*factor);
  }
  return factors;
}

Value AttentionLowering::softmaxExp(OpBuilder &rb, Value x) {
  auto exp = math::ExpOp::create(rb, loc, x);
  Type stored = cast<ShapedType>(input.getType()).getElementType();
  if (stored.isBF16() || stored.isF16())
    exp.setFastmath(arith::FastMathFlags::afn);
  return exp;
}

SmallVector<Value>
AttentionLowering::updateState(ValueRange carried, ArrayRef<Value> scores,
                               ArrayRef<Value> factors,
                               ArrayRef<SmallVector<Value>> vRows) {
  float inf = std::numeric_limits<float>::infinity();
  SmallVector<Value> next;
  for (int64_t j = 0; j < chunks; ++j) {
    Value m = carried[j * perChunk], sum = carried[j * perChunk + 1];
    Value x = scores[j];
    // One exponential per edge: either the maximum stays (scale 1, p =
    // e^(x - m)) or x raises it (scale e^(m - x), p = e^0 = 1), so both are
    // e^-|x - m| or 1, the values of e^(m - m') and e^(x - m') exactly.
    // NaN-propagating: a NaN score (or m) makes d NaN, so p, the sum and
    // the accumulators are NaN from there on, and m' NaN. A +inf score
    // adds NaN, as e^(inf - inf) would: p is (x - x) + 1 where x raises the
    // maximum. A -inf score adds 0 (not e^(-inf - -inf)), so that a row
    // starting with one is not poisoned; a row of -inf only is told apart
    // at the end.
    Value mNew = arith::MaximumFOp::create(b, loc, m, x);
    Value raises =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, m);
    Value d = arith::NegFOp::create(
        b, loc,
        math::AbsFOp::create(b, loc, arith::SubFOp::create(b, loc, x, m)));
    Value e = softmaxExp(b, d);
    Value scale = arith::SelectOp::create(b, loc, raises, e, kb.fp(1.0));
    // (One op per statement: the IR's order does not depend on the order
    // the compiler evaluates call arguments in.)
    Value xMinusX = arith::SubFOp::create(b, loc, x, x);
    Value one = arith::AddFOp::create(b, loc, xMinusX, kb.fp(1.0));
    Value dead = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                       kb.fp(-inf));
    Value weight = arith::SelectOp::create(b, loc, raises, one, e);
    Value zero = kb.fp(0.0);
    Value p = arith::SelectOp::create(b, loc, dead, zero, weight);
    next.push_back(mNew);
    next.push_back(math::FmaOp::create(b, loc, sum, scale, p));
    Value w = factors.empty()
                  ? p
                  : arith::MulFOp::create(b, loc, p, factors[j]).getResult();
    for (int64_t v = 0; v < vec; ++v) {
      Value a = carried[j * perChunk + 2 + v];
      Value pv = arith::MulFOp::create(b, loc, w, vRows[j][v]);
      next.push_back(math::FmaOp::create(b, loc, a, scale, pv));
    }
  }
  return next;
}

SmallVector<Value> AttentionLowering::updateStateGroup(
    ValueRange carried, ArrayRef<SmallVector<Value>> scores,
    ArrayRef<SmallVector<Value>> factors,
    ArrayRef<SmallVector<SmallVector<Value>>> vRows) {
  float inf = std::numeric_limits<float>::infinity();
  SmallVector<Value> next;
  for (int64_t j = 0; j < chunks; ++j) {
    Value m = carried[j * perChunk], sum = carried[j * perChunk + 1];
    // The new maximum m' over the state's and every edge's score
    // (NaN-propagating). The state scales by e^(m - m'): 1 where m is m'
    // (also m = m' = -inf, a row of -inf so far), NaN where m' is NaN. An
    // edge weighs e^(x - m') (one exponential each, arguments <= 0), 1 where
    // x is m' ((x - x) + 1: NaN for x = +inf, as e^(inf - inf) would be),
    // and 0 where x is -inf, so that -inf scores poison nothing; a row of
    // -inf only is told apart at the end, as with one edge a step.
    Value mNew = m;
    for (const SmallVector<Value> &edge : scores)
      mNew = arith::MaximumFOp::create(b, loc, mNew, edge[j]);
    Value stays =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, mNew);
    Value shrink = softmaxExp(b, arith::SubFOp::create(b, loc, m, mNew));
    Value scale = arith::SelectOp::create(b, loc, stays, kb.fp(1.0), shrink);
    SmallVector<Value> weights;
    Value newSum = arith::MulFOp::create(b, loc, sum, scale);
    for (auto [k, edge] : llvm::enumerate(scores)) {
      Value x = edge[j];
      Value top =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, mNew);
      Value e = softmaxExp(b, arith::SubFOp::create(b, loc, x, mNew));
      Value xMinusX = arith::SubFOp::create(b, loc, x, x);
      Value one = arith::AddFOp::create(b, loc, xMinusX, kb.fp(1.0));
      Value weight = arith::SelectOp::create(b, loc, top, one, e);
      Value dead = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                         kb.fp(-inf));
      Value zero = kb.fp(0.0);
      Value p = arith::SelectOp::create(b, loc, dead, zero, weight);
      newSum = arith::AddFOp::create(b, loc, newSum, p);
      weights.push_back(factors[k].empty()
                            ? p
                            : arith::MulFOp::create(b, loc, p, factors[k][j])
                                  .getResult());
    }
    next.push_back(mNew);
    next.push_back(newSum);
    for (int64_t v = 0; v < vec; ++v) {
      Value a = arith::MulFOp::create(b, loc, carried[j * perChunk + 2 + v],
                                      scale);
      for (auto [k, w] : llvm::enumerate(weights))
        a = math::FmaOp::create(b, loc, w, vRows[k][j][v], a);
      next.push_back(a);
    }
  }
  return next;
}

SmallVector<Value> AttentionLowering::mergeStates(OpBuilder &rb, ValueRange a,
                                                  ValueRange c) {
  SmallVector<Value> out;
  for (int64_t j = 0; j < chunks; ++j) {
    Value m1 = a[j * perChunk], m2 = c[j * perChunk];
    Value m = arith::MaximumFOp::create(rb, loc, m1, m2);
    // The state of the smaller maximum scales by e^-|m1 - m2| (one
    // exponential), the other's by 1; NaN where either maximum is NaN.
    Value e = softmaxExp(
        rb, arith::NegFOp::create(
                rb, loc,
                math::AbsFOp::create(rb, loc,
                                     arith::SubFOp::create(rb, loc, m1, m2))));
    auto factor = [&](Value mi) -> Value {
      Value same =
          arith::CmpFOp::create(rb, loc, arith::CmpFPredicate::OEQ, mi, m);
      Value one = arith::ConstantOp::create(rb, loc, rb.getFloatAttr(ft, 1.0));
      return arith::SelectOp::create(rb, loc, same, one, e);
    };
    Value f1 = factor(m1), f2 = factor(m2);
    out.push_back(m);
    for (int64_t i = 1; i < perChunk; ++i) {
      Value x = arith::MulFOp::create(rb, loc, a[j * perChunk + i], f1);
      out.push_back(math::FmaOp::create(rb, loc, c[j * perChunk + i], f2, x));
    }
  }
  return out;
}

SmallVector<Value> AttentionLowering::mergeEdgeGroups(ForEdgesOp loop) {
  auto mergeRule = [&](OpBuilder &rb, ValueRange a, ValueRange c) {
    return mergeStates(rb, a, c);
  };
  kb.buildCombine(loop.getMerge(), types, mergeRule);
  SmallVector<Value> state(loop.getResults());
  if (groups > 1) {
    auto red = TeamReduceOp::create(b, loc, state, fl, lanes);
    kb.buildCombine(red.getCombine(), types, mergeRule);
    state.assign(red.getResults().begin(), red.getResults().end());
  }
  return state;
}

LogicalResult AttentionLowering::storeOutputs(ValueRange state) {
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       edgeGroup, kb.idx(0));
  // The log-sum-exp of each head, m + log s, by the lane holding the head's
  // first feature (-inf for a row without edges: m = -inf, s = 0); it has a
  // row of `heads` per node (the verifiers make the softmax's input, the
  // spmm's weights and the log-sum-exp agree). A row whose scores are all
  // -inf also ends with s = 0: its output and log-sum-exp are NaN, as
  // torch's softmax gives (-inf - -inf), a row without edges 0 and -inf.
  Value hasEdges =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, begin);
  // One builder call per statement: argument order is unspecified, and
  // compilers differ (the printed IR must not).
  Value zeroOut = kb.fp(0.0);
  Value nanOut = kb.fp(std::numeric_limits<double>::quiet_NaN());
  Value noMassOut =
      arith::SelectOp::create(b, loc, hasEdges, nanOut, zeroOut);
  for (int64_t j = 0; j < chunks; ++j)
    if (failed(storeChunk(j, state, leader, hasEdges, noMassOut)))
      return failure();
  return success();
}

LogicalResult AttentionLowering::storeChunk(int64_t j, ValueRange state,
                                            Value leader, Value hasEdges,
                                            Value noMassOut) {
  Value cond = leader;
  if (active[j])
    cond = arith::AndIOp::create(b, loc, cond, active[j]);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value sum = state[j * perChunk + 1];
  Value zero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, kb.fp(0.0));
  Value inv = arith::DivFOp::create(b, loc, kb.fp(1.0), sum);
  SmallVector<Value> outs;
  for (int64_t v = 0; v < vec; ++v) {
    Value a = arith::MulFOp::create(b, loc, state[j * perChunk + 2 + v], inv);
    a = arith::SelectOp::create(b, loc, zero, noMassOut, a);
    FailureOr<Value> out =
        kb.applyConsumers(parts.consumers, spmm.getResult(), a, rowIdx,
                          kb.add(offsets[j], kb.idx(v)));
    if (failed(out))
      return failure();
    outs.push_back(*out);
  }
  kb.store(outs, kb.result(0), kb.add(kb.mul(rowIdx, row), offsets[j]));
  if (!parts.lse)
    return success();
  Value headStart = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          kb.rem(offsets[j], inner), kb.idx(0));
  auto lseIf = scf::IfOp::create(b, loc, TypeRange{}, headStart, false);
  b.setInsertionPointToStart(&lseIf.getThenRegion().front());
  Value lse = arith::AddFOp::create(b, loc, state[j * perChunk],
                                    math::LogOp::create(b, loc, sum));
  Value nanLse = kb.fp(std::numeric_limits<double>::quiet_NaN());
  Value noMass = arith::AndIOp::create(b, loc, zero, hasEdges);
  lse = arith::SelectOp::create(b, loc, noMass, nanLse, lse);
  kb.store({lse}, kb.result(1),
           kb.add(kb.mul(rowIdx, heads), kb.div(offsets[j], inner)));
  return success();
}

int64_t AttentionLowering::chooseEdgesPerStep() const {
  // Measured (bench/results/edge-groups-s63, one H100): against one edge a
  // step, two made every forward of GATv2 and GT on the scoreboard graphs
  // (mean in-degree 4 to 65) faster or level, f32 and bf16 (-1 % to -12 %),
  // and no forward+backward slower; reddit-like (mean in-degree 492):
  // GATv2 bf16 10.41 -> 9.73 ms, f32 15.94 -> 15.01. In bf16 and f16 four
  // again on a graph of long rows (reddit-like's GATv2 9.73 -> 8.81 ms;
  // in the light-row probe f32 gained nothing more from four); four was not
  // measured where rows are short, so it is taken only from a mean
  // in-degree of 128 (the module's statistics; two without them). f64
  // (twice f32's registers a value) was not measured and keeps one.
  unsigned bits = cast<ShapedType>(input.getType()).getElementTypeBitWidth();
  if (bits > 32)
    return 1;
  std::optional<double> degree = moduleMeanInDegree(group);
  return bits <= 16 && degree && *degree >= kLongRows ? 4 : 2;
}

LogicalResult AttentionLowering::lower() {
  edgesPerStep = chooseEdgesPerStep();
  mapRow();
  FailureOr<ForEdgesOp> loop = buildEdgeLoop();
  if (failed(loop))
    return failure();
  SmallVector<Value> state = mergeEdgeGroups(*loop);
  if (failed(storeOutputs(state)))
    return failure();
  finishRowKernel(kb, group, parts, schedule,
                  traversalRows(parts.graph, /*reversed=*/false));
  return success();
}

LogicalResult mlir::gnnk::lowerAttention(KernelGroupOp group, GroupParts &parts,
                                         int indexBits) {
  FailureOr<AttentionGroup> attention = AttentionGroup::match(group, parts);
  if (failed(attention))
    return failure();
  return AttentionLowering(group, parts, *attention, indexBits).lower();
}

void mlir::gnnk::populateAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                   int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::attention,
      gnn::Mapping::row_parallel, lowerAttention, indexBits);
}
