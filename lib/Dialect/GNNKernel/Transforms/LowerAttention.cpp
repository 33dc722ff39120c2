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

LogicalResult mlir::gnnk::lowerAttention(KernelGroupOp group,
                                         GroupParts &parts, int indexBits) {
  auto spmm = cast<gnn::SpmmOp>(parts.anchor);
  // The pipeline: sddmm, score ops, edge_softmax, the spmm.
  auto sddmm = parts.producers.empty()
                   ? gnn::SddmmOp()
                   : dyn_cast<gnn::SddmmOp>(parts.producers.front());
  // The softmax is followed by the ops scaling its weights (attention
  // dropout's `alpha * mask`), if any.
  auto softmaxIt = llvm::find_if(parts.producers, [](Operation *op) {
    return isa<gnn::EdgeSoftmaxOp>(op);
  });
  auto softmax = softmaxIt == parts.producers.end()
                     ? gnn::EdgeSoftmaxOp()
                     : cast<gnn::EdgeSoftmaxOp>(*softmaxIt);
  ArrayRef<Operation *> scalingOps =
      softmax ? ArrayRef(parts.producers)
                    .drop_front(softmaxIt - parts.producers.begin() + 1)
              : ArrayRef<Operation *>();
  Value weights = softmax ? softmax.getResult() : Value();
  bool scaled = true;
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
        generic->getResult(0).getType() != weights.getType()) {
      scaled = false;
      break;
    }
    weights = generic->getResult(0);
  }
  if (!sddmm || !softmax || !scaled || spmm.getWeights() != weights ||
      spmm.getReduce() != gnn::ReduceKind::sum || spmm.getReversed() ||
      softmax.getReversed() || sddmm.getReversed())
    return group.emitOpError("expects an attention group: sddmm, score ops, "
                             "edge_softmax, ops scaling it and an spmm sum "
                             "weighted by the result");
  SmallVector<linalg::GenericOp> scoreOps;
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
  Value input = spmm.getInput();
  auto vType = cast<RankedTensorType>(input.getType());
  FailureOr<int64_t> rowOr = rowElements(spmm.getResult(), spmm);
  if (failed(rowOr))
    return failure();
  int64_t row = *rowOr;
  int64_t inner = vType.getShape().back(); // features per head
  gnn::ScheduleAttr s = group.getScheduleAttr();
  int64_t lanes = s.getLanes(), vec = s.getVector();
  if (inner % vec)
    return spmm.emitOpError() << "has heads of " << inner
                              << " features, not a multiple of the schedule's "
                                 "vector width "
                              << vec;
  LanePartition part = partitionRow(row, lanes, vec);
  int64_t fl = part.featureLanes, groups = part.groups, chunk = part.chunk,
          chunks = part.chunks;
  constexpr int64_t kMaxChunks = 8;
  if (chunks > kMaxChunks)
    return spmm.emitOpError() << "has rows of " << row
                              << " elements; fused attention keeps at most "
                              << kMaxChunks * chunk << " per row team";

  // Distributed scores: the sddmm's operands are shaped like the aggregated
  // rows; for add/sub/mul the first score op must sum over the features.
  auto lhsType = cast<RankedTensorType>(sddmm.getLhs().getType());
  bool sameShape = lhsType.getShape().drop_front() == vType.getShape().drop_front();
  bool dotDistributed = sameShape && sddmm.getKind() == gnn::SddmmKind::dot;
  linalg::GenericOp featureReduce;
  if (sameShape && sddmm.getKind() != gnn::SddmmKind::dot && !scoreOps.empty() &&
      scoreOps.front().getNumReductionLoops() == 1 &&
      vType.getRank() >= 2 && isSumReduction(scoreOps.front()) &&
      scoreOps.front().getDpsInputOperand(0)->get() == sddmm.getResult() &&
      scoreOps.front().getMatchingIndexingMap(scoreOps.front().getDpsInputOperand(0)).isIdentity())
    featureReduce = scoreOps.front();
  bool distributed = dotDistributed || featureReduce;

  KernelBuilder kb(group, group.getKernel(), s.getBlock(), indexBits);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type ft = kb.ft;
  float inf = std::numeric_limits<float>::infinity();

  auto [rowIdx, lane] = rowMapping(kb, kb.size("nodes"), lanes);
  Value g = kb.div(lane, fl), f = kb.rem(lane, fl);
  RowTraversal t = traverse(kb, /*reversed=*/false, rowIdx);
  Value nbrs = t.nbrs, begin = t.begin, end = t.end;
  SmallVector<Value> offsets, active;
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
  SmallVector<SmallVector<Value>> dstRows;
  if (distributed)
    for (int64_t j = 0; j < chunks; ++j)
      dstRows.push_back(kb.load(kb.operand(sddmmDstOperand),
                                kb.add(kb.mul(rowIdx, row), offsets[j]), vec));

  // Carried per chunk: m, s, acc[vec].
  int64_t perChunk = 2 + vec;
  SmallVector<Value> inits;
  for (int64_t j = 0; j < chunks; ++j) {
    inits.push_back(kb.fp(-inf));
    for (int64_t i = 1; i < perChunk; ++i)
      inits.push_back(kb.fp(0.0));
  }
  SmallVector<Type> types(inits.size(), ft);
  auto loop = ForEdgesOp::create(b, loc, types, kb.add(begin, g), end,
                                 kb.idx(groups), nbrs, Value(), inits,
                                 b.getI64IntegerAttr(2));
  Block *body = new Block();
  loop.getBody().push_back(body);
  Value slot = body->addArgument(b.getIndexType(), loc);
  Value src = body->addArgument(b.getIndexType(), loc);
  for (Type t : types)
    body->addArgument(t, loc);
  ValueRange carried = body->getArguments().drop_front(2);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    EdgeRef e{slot, src, rowIdx};
    EdgeEvaluator eval(kb, group);
    SmallVector<SmallVector<Value>> vRows;
    for (int64_t j = 0; j < chunks; ++j)
      vRows.push_back(
          kb.load(kb.operand(input), kb.add(kb.mul(src, row), offsets[j]), vec));
    // The score of each chunk's head.
    SmallVector<Value> scores;
    if (distributed) {
      Value lhs = sddmm.getLhs();
      for (int64_t j = 0; j < chunks; ++j) {
        SmallVector<Value> l =
            lhs == input ? vRows[j]
                         : kb.load(kb.operand(lhs),
                                   kb.add(kb.mul(src, row), offsets[j]), vec);
        Value partial = kb.fp(0.0);
        for (int64_t v = 0; v < vec; ++v) {
          Value x = l[v], z = dstRows[j][v];
          if (dotDistributed) {
            partial = math::FmaOp::create(b, loc, x, z, partial);
            continue;
          }
          Value ev;
          switch (sddmm.getKind()) {
          case gnn::SddmmKind::add: ev = arith::AddFOp::create(b, loc, x, z); break;
          case gnn::SddmmKind::sub: ev = arith::SubFOp::create(b, loc, x, z); break;
          default: ev = arith::MulFOp::create(b, loc, x, z); break;
          }
          // The reduction body with this feature's loop indices.
          auto outType = cast<RankedTensorType>(featureReduce.getDpsInputOperand(0)->get().getType());
          Value k = kb.add(offsets[j], kb.idx(v));
          SmallVector<Value> idx = kb.rowIndices(slot, k, outType);
          SmallVector<Value> args = {ev};
          // getDpsInputOperands() returns a vector by value: keep it alive
          // for the loop (drop_begin only refers to it).
          SmallVector<OpOperand *> inputs = featureReduce.getDpsInputOperands();
          for (OpOperand *in : llvm::drop_begin(inputs)) {
            FailureOr<Value> a = kb.access(in->get(),
                                           featureReduce.getMatchingIndexingMap(in),
                                           idx, featureReduce);
            if (failed(a))
              return failure();
            args.push_back(*a);
          }
          args.push_back(partial);
          FailureOr<SmallVector<Value>> y = kb.inlineBody(featureReduce, args, idx);
          if (failed(y))
            return failure();
          partial = (*y)[0];
        }
        scores.push_back(partial);
      }
      // A head's lanes (and, for heads wider than a chunk, its chunks).
      int64_t lanesPerHead = std::min(inner / vec, fl);
      int64_t chunksPerHead = std::max<int64_t>(1, inner / chunk);
      if (lanesPerHead > 1 && !llvm::isPowerOf2_64(lanesPerHead)) {
        // Heads of a lane count that is not a power of two (e.g. 3
        // features) are not aligned to shuffle groups and may straddle
        // chunks: each lane sums its chunks per head (masked by the head
        // and by activity), one reduction over the feature lanes gives every
        // head's score, and each chunk takes its own head's.
        int64_t heads = row / inner;
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
                arith::SelectOp::create(b, loc, isHead(j, h), scores[j],
                                        kb.fp(0.0)));
          perHead.push_back(sum);
        }
        auto red = TeamReduceOp::create(b, loc, perHead, 1, fl);
        kb.buildCombine(red.getCombine(), SmallVector<Type>(perHead.size(), ft),
                        [&](OpBuilder &rb, ValueRange a, ValueRange c) {
                          SmallVector<Value> out;
                          for (auto [x, y] : llvm::zip(a, c))
                            out.push_back(arith::AddFOp::create(rb, loc, x, y));
                          return out;
                        });
        for (int64_t j = 0; j < chunks; ++j) {
          Value score = kb.fp(0.0);
          for (int64_t h = 0; h < heads; ++h)
            score = arith::SelectOp::create(b, loc, isHead(j, h),
                                            red.getResult(h), score);
          scores[j] = score;
        }
        chunksPerHead = 1;
      } else if (lanesPerHead > 1) {
        auto red = TeamReduceOp::create(b, loc, scores, 1, lanesPerHead);
        kb.buildCombine(red.getCombine(), SmallVector<Type>(scores.size(), ft),
                        [&](OpBuilder &rb, ValueRange a, ValueRange c) {
                          SmallVector<Value> out;
                          for (auto [x, y] : llvm::zip(a, c))
                            out.push_back(arith::AddFOp::create(rb, loc, x, y));
                          return out;
                        });
        scores.assign(red.getResults().begin(), red.getResults().end());
      }
      if (chunksPerHead > 1)
        for (int64_t j = 0; j < chunks; j += chunksPerHead) {
          Value sum = scores[j];
          for (int64_t q = 1; q < chunksPerHead && j + q < chunks; ++q)
            sum = arith::AddFOp::create(b, loc, sum, scores[j + q]);
          for (int64_t q = 0; q < chunksPerHead && j + q < chunks; ++q)
            scores[j + q] = sum;
        }
      // The rest of the score chain, per head.
      Value reduced = dotDistributed ? Value(sddmm.getResult())
                                     : Value(featureReduce->getResult(0));
      double init = 0.0;
      if (featureReduce) {
        std::optional<double> c = KernelBuilder::fillConstant(
            featureReduce.getDpsInitOperand(0)->get());
        if (!c)
          return featureReduce.emitOpError("expects a constant-filled init "
                                           "for a fused score reduction");
        init = *c;
      }
      for (int64_t j = 0; j < chunks; ++j) {
        Value head = kb.div(offsets[j], inner);
        Value score =
            init == 0.0 ? scores[j]
                        : arith::AddFOp::create(b, loc, scores[j], kb.fp(init))
                              .getResult();
        eval.setOverride(reduced, score);
        FailureOr<Value> final = eval.element(softmax.getInput(), e, head);
        if (failed(final))
          return failure();
        scores[j] = *final;
      }
    } else {
      for (int64_t j = 0; j < chunks; ++j) {
        FailureOr<Value> sc = eval.element(softmax.getInput(), e,
                                           kb.div(offsets[j], inner));
        if (failed(sc))
          return failure();
        scores.push_back(*sc);
      }
    }
    // The factor scaling each chunk's head's softmax weight (the dropout
    // mask): the scaling ops evaluated at weight 1, as they are linear in
    // it. The softmax's state (m, s) stays that of the unscaled weights.
    SmallVector<Value> factors;
    if (!scalingOps.empty()) {
      eval.setOverride(softmax.getResult(), kb.fp(1.0));
      for (int64_t j = 0; j < chunks; ++j) {
        FailureOr<Value> factor =
            eval.element(weights, e, kb.div(offsets[j], inner));
        if (failed(factor))
          return failure();
        factors.push_back(*factor);
      }
    }
    // The online softmax update.
    SmallVector<Value> next;
    for (int64_t j = 0; j < chunks; ++j) {
      Value m = carried[j * perChunk], sum = carried[j * perChunk + 1];
      Value x = scores[j];
      // NaN-propagating: a NaN score makes m, the scales and the sum NaN
      // from there on; a +inf score adds exp(inf - inf) = NaN. A -inf score
      // adds 0 (not exp(-inf - -inf)), so that a row starting with one is
      // not poisoned; a row of -inf only is told apart at the end.
      Value mNew = arith::MaximumFOp::create(b, loc, m, x);
      Value same = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, mNew);
      Value scale = arith::SelectOp::create(
          b, loc, same, kb.fp(1.0),
          math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, mNew)));
      Value dead = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                         kb.fp(-inf));
      Value p = arith::SelectOp::create(
          b, loc, dead, kb.fp(0.0),
          math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, mNew)));
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
    YieldOp::create(b, loc, next);
  }
  // Merging two partial states (edge groups, heavy-row chunks).
  auto mergeRule = [&](OpBuilder &rb, ValueRange a, ValueRange c) {
    SmallVector<Value> out;
    for (int64_t j = 0; j < chunks; ++j) {
      Value m1 = a[j * perChunk], m2 = c[j * perChunk];
      Value m = arith::MaximumFOp::create(rb, loc, m1, m2);
      auto factor = [&](Value mi) -> Value {
        Value same = arith::CmpFOp::create(rb, loc, arith::CmpFPredicate::OEQ, mi, m);
        Value one =
            arith::ConstantOp::create(rb, loc, rb.getFloatAttr(ft, 1.0));
        return arith::SelectOp::create(
            rb, loc, same, one,
            math::ExpOp::create(rb, loc, arith::SubFOp::create(rb, loc, mi, m)));
      };
      Value f1 = factor(m1), f2 = factor(m2);
      out.push_back(m);
      for (int64_t i = 1; i < perChunk; ++i) {
        Value x = arith::MulFOp::create(rb, loc, a[j * perChunk + i], f1);
        out.push_back(math::FmaOp::create(rb, loc, c[j * perChunk + i], f2, x));
      }
    }
    return out;
  };
  kb.buildCombine(loop.getMerge(), types, mergeRule);
  SmallVector<Value> state(loop.getResults());
  if (groups > 1) {
    auto red = TeamReduceOp::create(b, loc, state, fl, lanes);
    kb.buildCombine(red.getCombine(), types, mergeRule);
    state.assign(red.getResults().begin(), red.getResults().end());
  }
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, g,
                                       kb.idx(0));
  // The log-sum-exp of each head, m + log s, by the lane holding the head's
  // first feature (-inf for a row without edges: m = -inf, s = 0); it has a
  // row of `heads` per node (the verifiers make the softmax's input, the
  // spmm's weights and the log-sum-exp agree). A row whose scores are all
  // -inf also ends with s = 0: its output and log-sum-exp are NaN, as
  // torch's softmax gives (-inf - -inf), a row without edges 0 and -inf.
  int64_t heads = row / inner;
  Value hasEdges =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, begin);
  // One builder call per statement: argument order is unspecified, and
  // compilers differ (the printed IR must not).
  Value zeroOut = kb.fp(0.0);
  Value nanOut = kb.fp(std::numeric_limits<double>::quiet_NaN());
  Value noMassOut =
      arith::SelectOp::create(b, loc, hasEdges, nanOut, zeroOut);
  for (int64_t j = 0; j < chunks; ++j) {
    Value cond = leader;
    if (active[j])
      cond = arith::AndIOp::create(b, loc, cond, active[j]);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value sum = state[j * perChunk + 1];
    Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum,
                                       kb.fp(0.0));
    Value inv = arith::DivFOp::create(b, loc, kb.fp(1.0), sum);
    SmallVector<Value> outs;
    for (int64_t v = 0; v < vec; ++v) {
      Value a = arith::MulFOp::create(b, loc, state[j * perChunk + 2 + v], inv);
      a = arith::SelectOp::create(b, loc, zero, noMassOut, a);
      FailureOr<Value> out = kb.applyConsumers(
          parts.consumers, spmm.getResult(), a, rowIdx,
          kb.add(offsets[j], kb.idx(v)));
      if (failed(out))
        return failure();
      outs.push_back(*out);
    }
    kb.store(outs, kb.result(0), kb.add(kb.mul(rowIdx, row), offsets[j]));
    if (!parts.lse)
      continue;
    Value headStart = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, kb.rem(offsets[j], inner),
        kb.idx(0));
    auto lseIf = scf::IfOp::create(b, loc, TypeRange{}, headStart, false);
    b.setInsertionPointToStart(&lseIf.getThenRegion().front());
    Value lse = arith::AddFOp::create(b, loc, state[j * perChunk],
                                      math::LogOp::create(b, loc, sum));
    Value nanLse = kb.fp(std::numeric_limits<double>::quiet_NaN());
    Value noMass = arith::AndIOp::create(b, loc, zero, hasEdges);
    lse = arith::SelectOp::create(b, loc, noMass, nanLse, lse);
    kb.store({lse}, kb.result(1),
             kb.add(kb.mul(rowIdx, heads), kb.div(offsets[j], inner)));
  }
  finishRowKernel(kb, group, parts, s);
  return success();
}

void mlir::gnnk::populateAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                   int indexBits) {
  patterns.add<GroupLoweringPattern>(
      patterns.getContext(), gnn::GroupFamily::attention,
      gnn::Mapping::row_parallel, lowerAttention, indexBits);
}
