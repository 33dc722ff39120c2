//===- FusionTest.cpp - the kernel group planner --------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Fusion.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace gnn;

namespace {

using K = FusionOpKind;

/// Operands.
FusionOperand in(int producer) { return {producer, FusionSlot::Input}; }
FusionOperand weights(int producer) { return {producer, FusionSlot::Weights}; }
FusionOperand init(int producer) { return {producer, FusionSlot::Init}; }
FusionOperand plainOperand(int producer) {
  return {producer, FusionSlot::Other};
}
/// An elementwise input read with the identity map by an all-parallel op.
FusionOperand absorb(int producer) {
  return {producer, FusionSlot::Input, /*absorbable=*/true, /*chainable=*/true};
}
/// An elementwise input read with the identity map by a reduction.
FusionOperand chain(int producer) {
  return {producer, FusionSlot::Input, /*absorbable=*/false,
          /*chainable=*/true};
}
/// The side result (log-sum-exp) of an edge_softmax, read by any op.
FusionOperand lse(int producer) {
  FusionOperand o{producer, FusionSlot::Input};
  o.side = true;
  return o;
}
constexpr int kArg = -1;

/// Builds a problem op by op; uses are counted from the operands.
class Builder {
public:
  int graphOp(K kind, std::vector<FusionOperand> operands, int graph = 0) {
    FusionOp op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.graph = graph;
    op.edgeResult =
        kind == K::Gather || kind == K::Sddmm || kind == K::EdgeSoftmax;
    for (const FusionOperand &o : op.operands)
      op.weighted |= o.slot == FusionSlot::Weights;
    return add(op);
  }
  int elementwise(std::vector<FusionOperand> operands, bool edge,
                  bool parallel = true) {
    FusionOp op;
    op.kind = K::Elementwise;
    op.operands = std::move(operands);
    op.edgeResult = edge;
    op.parallel = parallel;
    // A chain link is an edge loop op (FormKernelGroups' isChainLink).
    for (const FusionOperand &o : op.operands)
      op.perEdge |= edge && o.chainable;
    return add(op);
  }
  int size(std::vector<int> producers) {
    return plain(K::SizeQuery, producers);
  }
  int other(std::vector<int> producers) { return plain(K::Other, producers); }
  FusionOp &operator[](int i) { return p.ops[i]; }
  FusionProblem done(FusionOptions options = {}) {
    for (FusionOp &op : p.ops)
      op.numUses = op.numSideUses = 0;
    for (const FusionOp &op : p.ops)
      for (const FusionOperand &o : op.operands)
        if (o.producer >= 0)
          ++(o.side ? p.ops[o.producer].numSideUses
                    : p.ops[o.producer].numUses);
    p.options = options;
    EXPECT_EQ(p.check(), "");
    return p;
  }

private:
  FusionProblem p;
  int add(FusionOp op) {
    p.ops.push_back(std::move(op));
    return p.ops.size() - 1;
  }
  int plain(K kind, const std::vector<int> &producers) {
    FusionOp op;
    op.kind = kind;
    for (int producer : producers)
      op.operands.push_back(plainOperand(producer));
    return add(op);
  }
};

/// Plans and verifies `p`.
FusionPlan plan(const FusionProblem &p) {
  FusionPlan plan = planFusion(p);
  EXPECT_EQ(plan.verify(p), "");
  return plan;
}

/// The group holding `op`, or null.
const FusionGroup *groupOf(const FusionPlan &plan, int op) {
  for (const FusionGroup &g : plan.groups)
    for (int m : g.members)
      if (m == op)
        return &g;
  return nullptr;
}

/// GATv2: sddmm add → dim/empty/fill → score (reduction over the features)
/// → edge_softmax → spmm sum → collapse → bias → return.
struct Gatv2 {
  Builder b;
  int sddmm, dim, empty, fill, score, softmax, spmm, collapse, bias, ret;
  explicit Gatv2(bool reversedSoftmax = false) {
    sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
    dim = b.size({sddmm, kArg});
    empty = b.size({dim});
    fill = b.size({kArg, empty});
    score = b.elementwise({chain(sddmm), in(kArg), init(fill)}, true);
    softmax = b.graphOp(K::EdgeSoftmax, {in(score)});
    b[softmax].reversed = reversedSoftmax;
    spmm = b.graphOp(K::Spmm, {in(kArg), weights(softmax)});
    collapse = b.other({spmm});
    bias = b.elementwise({in(collapse), in(kArg), init(kArg)}, false);
    ret = b.other({bias});
  }
};

TEST(Fusion, Gatv2IsOneAttentionGroup) {
  Gatv2 g;
  FusionPlan p = plan(g.b.done());
  ASSERT_EQ(p.groups.size(), 2u);
  const FusionGroup &att = p.groups[0];
  EXPECT_EQ(att.family, FusionFamily::Attention);
  EXPECT_TRUE(att.fused);
  EXPECT_EQ(att.anchor, g.sddmm);
  // The size queries sizing the score move into the group with it.
  EXPECT_EQ(att.members, (std::vector<int>{g.sddmm, g.dim, g.empty, g.fill,
                                           g.score, g.softmax, g.spmm}));
  EXPECT_EQ(p.groups[1].family, FusionFamily::Elementwise);
  EXPECT_EQ(p.groups[1].members, std::vector<int>{g.bias});
}

/// An edge input scaling the value it reads (attention dropout's
/// `alpha * mask`).
FusionOperand scale(int producer) {
  FusionOperand o = absorb(producer);
  o.scaled = true;
  return o;
}

/// GAT with attention dropout: sddmm → score → edge_softmax → alpha * mask
/// (a scaled read, or a plain absorbable one) → spmm sum.
struct Dropout {
  Builder b;
  int sddmm, score, softmax, mask, spmm;
  explicit Dropout(bool scaled) {
    sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
    score = b.elementwise({absorb(sddmm), init(kArg)}, true);
    softmax = b.graphOp(K::EdgeSoftmax, {in(score)});
    mask = b.elementwise(
        {scaled ? scale(softmax) : absorb(softmax), in(kArg), init(kArg)},
        true);
    spmm = b.graphOp(K::Spmm, {in(kArg), weights(mask)});
    b.other({spmm});
  }
};

TEST(Fusion, AttentionTakesOpsScalingTheSoftmax) {
  Dropout d(/*scaled=*/true);
  FusionProblem problem = d.b.done();
  FusionPlan p = plan(problem);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].family, FusionFamily::Attention);
  EXPECT_EQ(p.groups[0].members,
            (std::vector<int>{d.sddmm, d.score, d.softmax, d.mask, d.spmm}));

  // An op between the softmax and the spmm that does not scale it (say
  // alpha + mask) is refused by the verifier and keeps the kernels apart.
  problem.ops[d.mask].operands[0].scaled = false;
  EXPECT_NE(p.verify(problem), "");
  Dropout plain(/*scaled=*/false);
  FusionPlan q = plan(plain.b.done());
  EXPECT_NE(groupOf(q, plain.spmm)->family, FusionFamily::Attention);
  EXPECT_NE(groupOf(q, plain.softmax), groupOf(q, plain.spmm));
}

TEST(Fusion, AttentionReturnsTheLogSumExp) {
  // The softmax's log-sum-exp, used after the group (by the terminator and
  // an op), becomes a second result of the attention group.
  Gatv2 g;
  int after = g.b.other({g.ret});
  g.b[after].operands.push_back(lse(g.softmax));
  FusionProblem problem = g.b.done();
  ++problem.ops[g.softmax].numSideUses; // also returned by the function
  FusionPlan p = plan(problem);
  const FusionGroup *att = groupOf(p, g.spmm);
  ASSERT_TRUE(att);
  EXPECT_EQ(att->family, FusionFamily::Attention);
  EXPECT_EQ(att->sideResults, std::vector<int>{g.softmax});

  FusionPlan none = p;
  for (FusionGroup &group : none.groups)
    group.sideResults.clear();
  EXPECT_NE(none.verify(problem), "") << "the log-sum-exp must be returned";
}

TEST(Fusion, LogSumExpReadInsideTheSpanFallsBack) {
  // An op between the softmax and the spmm reads the log-sum-exp: the group
  // would be placed at the spmm, after it, so attention does not apply.
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int softmax = b.graphOp(K::EdgeSoftmax, {in(sddmm)});
  int early = b.elementwise({lse(softmax), init(kArg)}, false);
  int spmm = b.graphOp(K::Spmm, {in(kArg), weights(softmax)});
  b.other({spmm, early});
  FusionProblem problem = b.done();
  FusionPlan p = plan(problem);
  EXPECT_EQ(groupOf(p, spmm)->family, FusionFamily::Aggregation);
  EXPECT_EQ(groupOf(p, softmax)->family, FusionFamily::EdgeSoftmax);
  // A softmax alone returns its results itself.
  EXPECT_TRUE(groupOf(p, softmax)->sideResults.empty());

  // A consumer absorbed after such a reader would move the softmax past it.
  Builder c;
  int x = c.graphOp(K::EdgeSoftmax, {in(kArg)});
  int reader = c.elementwise({lse(x), init(kArg)}, false);
  int scale = c.elementwise({absorb(x), init(kArg)}, true);
  c.other({scale, reader});
  FusionPlan q = plan(c.done());
  EXPECT_EQ(groupOf(q, x)->members, std::vector<int>{x});
}

TEST(Fusion, SizeQueryAfterTheLastMemberShrinksTheGroup) {
  // sddmm -> absorbable consumer (unused), then a tensor.dim of the sddmm:
  // the group is placed at its last member, so it must not end with the
  // size query; the consumer is left out instead.
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int consumer = b.elementwise({absorb(sddmm), init(kArg)}, true);
  int dim = b.size({sddmm, kArg});
  FusionPlan p = plan(b.done());
  EXPECT_EQ(groupOf(p, sddmm)->members, std::vector<int>{sddmm});
  EXPECT_EQ(groupOf(p, consumer)->family, FusionFamily::Elementwise);
  EXPECT_EQ(groupOf(p, dim), nullptr);

  // Attention whose score size is queried after the spmm: no attention.
  Gatv2 g;
  int late = g.b.size({g.sddmm, kArg});
  FusionPlan q = plan(g.b.done());
  EXPECT_NE(groupOf(q, g.spmm)->family, FusionFamily::Attention);
  EXPECT_EQ(groupOf(q, late), nullptr);
}

TEST(Fusion, GatScoreChainAndConsumers) {
  // sddmm → leaky relu (absorbable) → softmax → spmm → absorbed bias.
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int dim = b.size({sddmm, kArg});
  int empty = b.size({dim});
  int leaky = b.elementwise({absorb(sddmm), init(empty)}, true);
  int softmax = b.graphOp(K::EdgeSoftmax, {in(leaky)});
  int spmm = b.graphOp(K::Spmm, {in(kArg), weights(softmax)});
  int bias = b.elementwise({absorb(spmm), in(kArg), init(kArg)}, false);
  b.other({bias});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].family, FusionFamily::Attention);
  EXPECT_EQ(p.groups[0].members,
            (std::vector<int>{sddmm, dim, empty, leaky, softmax, spmm, bias}));
}

TEST(Fusion, TransformerWithoutScoreChain) {
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int softmax = b.graphOp(K::EdgeSoftmax, {in(sddmm)});
  int spmm = b.graphOp(K::Spmm, {in(kArg), weights(softmax)});
  b.other({spmm});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].members, (std::vector<int>{sddmm, softmax, spmm}));
  EXPECT_EQ(p.groups[0].family, FusionFamily::Attention);
}

TEST(Fusion, UserScoreWithTwoLinks) {
  // sddmm mul → tanh (parallel) → sum over the features → softmax → spmm.
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int tanh = b.elementwise({absorb(sddmm), init(kArg)}, true);
  int sum = b.elementwise({chain(tanh), init(kArg)}, true);
  int softmax = b.graphOp(K::EdgeSoftmax, {in(sum)});
  int spmm = b.graphOp(K::Spmm, {in(kArg), weights(softmax)});
  b.other({spmm});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].members,
            (std::vector<int>{sddmm, tanh, sum, softmax, spmm}));
}

TEST(Fusion, EscapingIntermediatesFallBack) {
  // The attention weights are also returned: no attention group.
  Gatv2 g;
  g.b.other({g.softmax});
  FusionPlan p = plan(g.b.done());
  // The score is written once, its sddmm computed in its kernel.
  EXPECT_EQ(groupOf(p, g.sddmm)->family, FusionFamily::EdgeMap);
  EXPECT_EQ(groupOf(p, g.sddmm), groupOf(p, g.score));
  EXPECT_EQ(groupOf(p, g.softmax)->family, FusionFamily::EdgeSoftmax);
  EXPECT_EQ(groupOf(p, g.spmm)->family, FusionFamily::Aggregation);
  EXPECT_FALSE(groupOf(p, g.spmm)->fused);
  // The score's size query also sizes something outside: no attention.
  Gatv2 h;
  h.b.other({h.empty});
  EXPECT_EQ(groupOf(plan(h.b.done()), h.spmm)->family,
            FusionFamily::Aggregation);
  // A use outside the problem (a nested region, say) counts as well.
  Gatv2 k;
  FusionProblem nested = k.b.done();
  ++nested.ops[k.score].numUses;
  EXPECT_NE(groupOf(plan(nested), k.softmax)->family, FusionFamily::Attention);
}

TEST(Fusion, AttentionNeedsForwardSoftmaxAndSum) {
  Gatv2 reversed(/*reversedSoftmax=*/true);
  FusionPlan p = plan(reversed.b.done());
  EXPECT_EQ(groupOf(p, reversed.softmax)->members,
            std::vector<int>{reversed.softmax});
  EXPECT_EQ(groupOf(p, reversed.sddmm)->members,
            (std::vector<int>{reversed.sddmm, reversed.dim, reversed.empty,
                              reversed.fill, reversed.score}));
  EXPECT_EQ(groupOf(p, reversed.sddmm)->family, FusionFamily::EdgeMap);

  Gatv2 reversedScore;
  reversedScore.b[reversedScore.sddmm].reversed = true;
  EXPECT_EQ(groupOf(plan(reversedScore.b.done()), reversedScore.spmm)->family,
            FusionFamily::Aggregation);

  Gatv2 mean;
  mean.b[mean.spmm].reduce = FusionReduce::Mean;
  EXPECT_NE(groupOf(plan(mean.b.done()), mean.spmm)->family,
            FusionFamily::Attention);

  Gatv2 twoGraphs;
  twoGraphs.b[twoGraphs.spmm].graph = 1;
  EXPECT_NE(groupOf(plan(twoGraphs.b.done()), twoGraphs.spmm)->family,
            FusionFamily::Attention);
}

TEST(Fusion, GatherApplyReduce) {
  // gather → multiply by an edge weight (absorbable) → reduce max.
  Builder b;
  int gather = b.graphOp(K::Gather, {in(kArg)});
  int dim = b.size({gather, kArg});
  int empty = b.size({dim});
  int scale = b.elementwise({absorb(gather), in(kArg), init(empty)}, true);
  int reduce = b.graphOp(K::Reduce, {in(scale)});
  b[reduce].reduce = FusionReduce::Max;
  b.other({reduce});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].family, FusionFamily::Aggregation);
  EXPECT_TRUE(p.groups[0].fused);
  EXPECT_EQ(p.groups[0].members,
            (std::vector<int>{gather, dim, empty, scale, reduce}));
  // A reversed reduce (rows by source) fuses too.
  Builder r;
  int g2 = r.graphOp(K::Gather, {in(kArg)});
  int red2 = r.graphOp(K::Reduce, {in(g2)});
  r[red2].reversed = true;
  r.other({red2});
  FusionPlan rp = plan(r.done());
  ASSERT_EQ(rp.groups.size(), 1u);
  EXPECT_EQ(rp.groups[0].members, (std::vector<int>{g2, red2}));
  EXPECT_TRUE(rp.groups[0].fused);
  // A gather of another graph is not pulled in: it is materialised.
  Builder o;
  int g3 = o.graphOp(K::Gather, {in(kArg)}, /*graph=*/1);
  int red3 = o.graphOp(K::Reduce, {in(g3)});
  o.other({red3});
  FusionPlan op = plan(o.done());
  ASSERT_EQ(op.groups.size(), 2u);
  EXPECT_EQ(groupOf(op, g3)->family, FusionFamily::EdgeMap);
  EXPECT_EQ(groupOf(op, red3)->members, std::vector<int>{red3});
}

TEST(Fusion, EdgeValuesAsSpmmWeights) {
  // sddmm dot → sigmoid → spmm weights (no softmax): aggregation.
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int sigmoid = b.elementwise({absorb(sddmm), init(kArg)}, true);
  int spmm = b.graphOp(K::Spmm, {in(kArg), weights(sigmoid)});
  b.other({spmm});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].family, FusionFamily::Aggregation);
  EXPECT_EQ(p.groups[0].members, (std::vector<int>{sddmm, sigmoid, spmm}));
  // The same value as the spmm's features (not its weights) is not fused.
  Builder f;
  int gather = f.graphOp(K::Gather, {in(kArg)});
  int spmm2 = f.graphOp(K::Spmm, {in(gather)});
  f.other({spmm2});
  EXPECT_EQ(plan(f.done()).groups.size(), 2u);
}

TEST(Fusion, DagOfTwoGathersAndAnSddmmIsOneReduce) {
  // x[src] * y[dst] + (x . y)[head], the per-head sddmm read by each feature
  // of its head (a broadcast: chainable, not absorbable) → reduce sum.
  Builder b;
  int gx = b.graphOp(K::Gather, {in(kArg)});
  int gy = b.graphOp(K::Gather, {in(kArg)});
  int dot = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int dim = b.size({gx, kArg});
  int empty = b.size({dim});
  int combine = b.elementwise({absorb(gx), absorb(gy), chain(dot), init(empty)},
                              /*edge=*/true);
  int reduce = b.graphOp(K::Reduce, {in(combine)});
  b.other({reduce});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].family, FusionFamily::Aggregation);
  EXPECT_TRUE(p.groups[0].fused);
  EXPECT_EQ(p.groups[0].members,
            (std::vector<int>{gx, gy, dot, dim, empty, combine, reduce}));
  EXPECT_TRUE(p.groups[0].recomputed.empty());
  // Read other than at its own edge (neither chainable nor absorbable), the
  // sddmm is written by a group of its own and the rest still fuses.
  Builder w;
  int wx = w.graphOp(K::Gather, {in(kArg)});
  int wdot = w.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int wcombine =
      w.elementwise({absorb(wx), in(wdot), init(kArg)}, /*edge=*/true);
  int wreduce = w.graphOp(K::Reduce, {in(wcombine)});
  w.other({wreduce});
  FusionPlan wp = plan(w.done());
  ASSERT_EQ(wp.groups.size(), 2u);
  EXPECT_EQ(groupOf(wp, wdot)->members, std::vector<int>{wdot});
  EXPECT_EQ(groupOf(wp, wdot)->family, FusionFamily::EdgeMap);
  EXPECT_EQ(groupOf(wp, wreduce)->members,
            (std::vector<int>{wx, wcombine, wreduce}));
}

TEST(Fusion, SharedEdgeValueIsRecomputedInEachAggregation) {
  // GATv2's backward in small: a per-head edge value ds (an sddmm and an
  // elementwise op on it) read through a broadcast by the inputs of a reduce
  // and of a reversed reduce. Each group computes ds for itself.
  Builder b;
  int dot = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int ds = b.elementwise({absorb(dot), init(kArg)}, /*edge=*/true);
  int e = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int scale1 = b.elementwise({absorb(e), chain(ds), init(kArg)}, true);
  int reduce1 = b.graphOp(K::Reduce, {in(scale1)});
  int scale2 = b.elementwise({absorb(e), chain(ds), init(kArg)}, true);
  int reduce2 = b.graphOp(K::Reduce, {in(scale2)});
  b[reduce2].reversed = true;
  b.other({reduce1, reduce2});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 2u);
  const std::vector<int> shared = {dot, ds, e};
  EXPECT_EQ(p.groups[0].members,
            (std::vector<int>{dot, ds, e, scale1, reduce1}));
  EXPECT_EQ(p.groups[1].members,
            (std::vector<int>{dot, ds, e, scale2, reduce2}));
  for (const FusionGroup &g : p.groups) {
    EXPECT_EQ(g.family, FusionFamily::Aggregation);
    EXPECT_TRUE(g.fused);
    EXPECT_EQ(g.recomputed, shared);
  }
  // Also returned (a use outside every group), ds is written once by an
  // edge map holding its sddmm, and both aggregations read it.
  Builder r;
  int rdot = r.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int rds = r.elementwise({absorb(rdot), init(kArg)}, /*edge=*/true);
  int re = r.graphOp(K::Gather, {in(kArg)});
  int rscale1 = r.elementwise({absorb(re), chain(rds), init(kArg)}, true);
  int rreduce1 = r.graphOp(K::Reduce, {in(rscale1)});
  int rscale2 = r.elementwise({absorb(re), chain(rds), init(kArg)}, true);
  int rreduce2 = r.graphOp(K::Reduce, {in(rscale2)});
  r.other({rreduce1, rreduce2, rds});
  FusionPlan rp = plan(r.done());
  ASSERT_EQ(rp.groups.size(), 3u);
  EXPECT_EQ(groupOf(rp, rds)->family, FusionFamily::EdgeMap);
  EXPECT_EQ(groupOf(rp, rds)->members, (std::vector<int>{rdot, rds}));
  for (int reduce : {rreduce1, rreduce2}) {
    const FusionGroup *g = groupOf(rp, reduce);
    EXPECT_EQ(g->recomputed, std::vector<int>{re});
    EXPECT_FALSE(std::count(g->members.begin(), g->members.end(), rds));
  }
}

TEST(Fusion, ElementwiseRootsNeedAProducer) {
  // An elementwise op on edge features (a function argument) feeding a
  // reduce: the reduce runs alone, the elementwise op in a group of its own.
  Builder b;
  int scale = b.elementwise({in(kArg), init(kArg)}, true);
  int reduce = b.graphOp(K::Reduce, {in(scale)});
  b.other({reduce});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].members, std::vector<int>{reduce});
  EXPECT_FALSE(p.groups[0].fused);
  EXPECT_EQ(p.groups[1].members, std::vector<int>{scale});
}

TEST(Fusion, RulesCanBeTurnedOff) {
  Gatv2 g;
  FusionPlan none =
      plan(g.b.done({/*attention=*/false, /*aggregation=*/false}));
  ASSERT_EQ(none.groups.size(), 5u);
  for (const FusionGroup &group : none.groups)
    EXPECT_FALSE(group.fused);
  EXPECT_EQ(none.groups[0].members, std::vector<int>{g.sddmm});
  EXPECT_EQ(none.groups[1].members, std::vector<int>{g.softmax});
  EXPECT_EQ(none.groups[2].members, std::vector<int>{g.spmm});
  EXPECT_EQ(none.groups[3].members, std::vector<int>{g.score});
  EXPECT_EQ(none.groups[4].members, std::vector<int>{g.bias});

  // Attention only: gather-apply-reduce stays apart.
  Builder b;
  int gather = b.graphOp(K::Gather, {in(kArg)});
  int reduce = b.graphOp(K::Reduce, {in(gather)});
  b.other({reduce});
  EXPECT_EQ(plan(b.done({true, false})).groups.size(), 2u);
  EXPECT_EQ(plan(b.done({false, true})).groups.size(), 1u);
  // Aggregation only: the attention pipeline does not become an aggregation
  // (the softmax is not elementwise); the score's edge map computes the
  // sddmm.
  Gatv2 h;
  FusionPlan agg = plan(h.b.done({false, true}));
  EXPECT_EQ(agg.groups.size(), 4u);
  EXPECT_EQ(groupOf(agg, h.sddmm), groupOf(agg, h.score));
}

TEST(Fusion, UnfusedGroupsAbsorbConsumersAsBefore) {
  // degree → rsqrt (absorbed, its empty init sized from elsewhere) → used by
  // two ops: the chain stops there.
  Builder b;
  int n = b.size({kArg, kArg});
  int empty = b.size({n});
  int degree = b.graphOp(K::Degree, {});
  int rsqrt = b.elementwise({absorb(degree), init(empty)}, false);
  int use1 = b.elementwise({absorb(rsqrt), init(kArg)}, false);
  int use2 = b.elementwise({absorb(rsqrt), init(kArg)}, false);
  b.other({use1, use2});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 3u);
  EXPECT_EQ(p.groups[0].family, FusionFamily::Degree);
  EXPECT_EQ(p.groups[0].members, (std::vector<int>{degree, rsqrt}));
  // A size query of the producer used elsewhere blocks the absorption.
  Builder c;
  int spmm = c.graphOp(K::Spmm, {in(kArg)});
  int dim = c.size({spmm, kArg});
  int tanh = c.elementwise({absorb(spmm), init(kArg)}, false);
  c.other({tanh, dim});
  FusionPlan q = plan(c.done());
  EXPECT_EQ(groupOf(q, spmm)->members, std::vector<int>{spmm});
  // A consumer reading the producer twice is not absorbed, but an edge DAG
  // may read a value twice: one group.
  Builder d;
  int gather = d.graphOp(K::Gather, {in(kArg)});
  int square =
      d.elementwise({absorb(gather), absorb(gather), init(kArg)}, true);
  d.other({square});
  EXPECT_EQ(plan(d.done()).groups.size(), 1u);
  EXPECT_EQ(plan(d.done({true, false})).groups.size(), 2u);
}

/// GCN: n = dim x; empty; fill; h = matmul; deg = degree; dempty;
/// dinv = rsqrt(deg + 1) (absorbable); hs = h * dinv[row]; agg = spmm(hs);
/// out = dinv * (agg + hs) + b (absorbs agg); return out.
struct Gcn {
  Builder b;
  int n, empty, fill, matmul, degree, dempty, dinv, hs, spmm, out, ret;
  /// With `sizeHsByDinv`, hs's init is sized by a dim of dinv.
  int dim = -1, hsEmpty = -1;
  explicit Gcn(int degreeGraph = 0, bool sizeHsByDinv = false) {
    n = b.size({kArg, kArg});
    empty = b.size({n});
    fill = b.size({kArg, empty});
    matmul = b.other({kArg, kArg, fill});
    degree = b.graphOp(K::Degree, {}, degreeGraph);
    dempty = b.size({n});
    dinv = b.elementwise({absorb(degree), init(dempty)}, false);
    if (sizeHsByDinv) {
      dim = b.size({dinv, kArg});
      hsEmpty = b.size({dim});
    }
    hs = b.elementwise(
        {in(matmul), in(dinv), init(sizeHsByDinv ? hsEmpty : empty)}, false);
    spmm = b.graphOp(K::Spmm, {in(hs)});
    out = b.elementwise(
        {absorb(spmm), in(hs), in(dinv), in(kArg), init(empty)}, false);
    ret = b.other({out});
  }
};

TEST(Fusion, GcnPrologueIsOneAggregationGroup) {
  Gcn g;
  FusionPlan p = plan(g.b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  const FusionGroup &agg = p.groups[0];
  EXPECT_EQ(agg.family, FusionFamily::Aggregation);
  EXPECT_TRUE(agg.fused);
  EXPECT_EQ(agg.anchor, g.degree);
  EXPECT_EQ(agg.members,
            (std::vector<int>{g.degree, g.dinv, g.hs, g.spmm, g.out}));

  // Without the rule: today's degree / elementwise / spmm groups.
  FusionPlan off = plan(g.b.done({true, true, /*prologue=*/false}));
  ASSERT_EQ(off.groups.size(), 3u);
  EXPECT_EQ(off.groups[0].family, FusionFamily::Degree);
  EXPECT_EQ(off.groups[0].members, (std::vector<int>{g.degree, g.dinv}));
  EXPECT_EQ(off.groups[1].members, (std::vector<int>{g.spmm, g.out}));
  EXPECT_EQ(off.groups[2].members, std::vector<int>{g.hs});
  for (const FusionGroup &group : off.groups)
    EXPECT_FALSE(group.fused);
  // The plan with the prologue is invalid once the rule is off.
  EXPECT_NE(p.verify(g.b.done({true, true, false})), "");
  // Reversed spmm and degree, other reductions: still one group.
  Gcn r;
  r.b[r.spmm].reversed = true;
  r.b[r.degree].reversed = true;
  r.b[r.spmm].reduce = FusionReduce::Max;
  EXPECT_EQ(plan(r.b.done()).groups.size(), 1u);
}

TEST(Fusion, PrologueValuesMustNotEscape) {
  // hs also returned.
  Gcn hs;
  hs.b.other({hs.hs});
  FusionPlan p = plan(hs.b.done());
  EXPECT_FALSE(groupOf(p, hs.spmm)->fused);
  EXPECT_EQ(groupOf(p, hs.degree)->family, FusionFamily::Degree);
  EXPECT_EQ(groupOf(p, hs.hs)->family, FusionFamily::Elementwise);
  // dinv used by another op outside the group.
  Gcn dinv;
  dinv.b.elementwise({in(dinv.dinv), init(kArg)}, false);
  FusionPlan q = plan(dinv.b.done());
  EXPECT_FALSE(groupOf(q, dinv.spmm)->fused);
  EXPECT_EQ(groupOf(q, dinv.hs)->members, std::vector<int>{dinv.hs});
  // A size query on hs sizing something outside.
  Gcn size;
  int dim = size.b.size({size.hs, kArg});
  size.b.other({dim});
  EXPECT_FALSE(groupOf(plan(size.b.done()), size.spmm)->fused);
  // A size query on dinv used only inside moves in with it.
  Gcn inside(/*degreeGraph=*/0, /*sizeHsByDinv=*/true);
  FusionPlan s = plan(inside.b.done());
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].members,
            (std::vector<int>{inside.degree, inside.dinv, inside.dim,
                              inside.hsEmpty, inside.hs, inside.spmm,
                              inside.out}));
  // ... and blocks the rule when it also sizes something outside.
  Gcn outside(/*degreeGraph=*/0, /*sizeHsByDinv=*/true);
  outside.b.other({outside.hsEmpty});
  EXPECT_FALSE(groupOf(plan(outside.b.done()), outside.spmm)->fused);
}

TEST(Fusion, PrologueStopsAtOtherOps) {
  // The degree of another graph stays out (as a group of its own); dinv,
  // hs and the spmm still form the prologue group.
  Gcn g(/*degreeGraph=*/1);
  FusionPlan p = plan(g.b.done());
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(groupOf(p, g.degree)->members, std::vector<int>{g.degree});
  EXPECT_EQ(groupOf(p, g.degree)->family, FusionFamily::Degree);
  EXPECT_EQ(groupOf(p, g.spmm)->members,
            (std::vector<int>{g.dinv, g.hs, g.spmm, g.out}));
  EXPECT_EQ(groupOf(p, g.spmm)->anchor, g.dinv);
  EXPECT_TRUE(groupOf(p, g.spmm)->fused);

  // Features with reductions or edge results do not start a prologue.
  Builder r;
  int sum = r.elementwise({in(kArg), init(kArg)}, false, /*parallel=*/false);
  int spmm = r.graphOp(K::Spmm, {in(sum)});
  r.other({spmm});
  EXPECT_EQ(plan(r.done()).groups.size(), 2u);

  // A reduce is not an anchor.
  Builder d;
  int deg = d.graphOp(K::Degree, {});
  int scale = d.elementwise({absorb(deg), init(kArg)}, false);
  int reduce = d.graphOp(K::Reduce, {in(scale)});
  d.other({reduce});
  FusionPlan dp = plan(d.done());
  ASSERT_EQ(dp.groups.size(), 2u);
  EXPECT_EQ(groupOf(dp, deg)->members, (std::vector<int>{deg, scale}));
  EXPECT_EQ(groupOf(dp, reduce)->members, std::vector<int>{reduce});
}

TEST(Fusion, PrologueWithEdgeWeights) {
  // sddmm → sigmoid → spmm weights, features scaled by a node op: one group
  // holding the prologue, then the edge chain.
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int sigmoid = b.elementwise({absorb(sddmm), init(kArg)}, true);
  int scale = b.elementwise({in(kArg), init(kArg)}, false);
  int spmm = b.graphOp(K::Spmm, {in(scale), weights(sigmoid)});
  b.other({spmm});
  FusionPlan p = plan(b.done());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].members,
            (std::vector<int>{sddmm, sigmoid, scale, spmm}));
  EXPECT_EQ(p.groups[0].anchor, sddmm);
  // Aggregation off: the prologue still applies, the edge chain does not.
  FusionPlan q = plan(b.done({true, false, true}));
  EXPECT_EQ(groupOf(q, spmm)->members, (std::vector<int>{scale, spmm}));
  // The attention rule keeps its spmm.
  Builder c;
  int x = c.elementwise({in(kArg), init(kArg)}, false);
  int s2 = c.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  int sm = c.graphOp(K::EdgeSoftmax, {in(s2)});
  int sp = c.graphOp(K::Spmm, {in(x), weights(sm)});
  c.other({sp});
  FusionPlan cp = plan(c.done());
  EXPECT_EQ(groupOf(cp, sp)->family, FusionFamily::Attention);
  EXPECT_EQ(groupOf(cp, x)->family, FusionFamily::Elementwise);
}

TEST(Fusion, CheckRejectsBadInput) {
  Builder b;
  int sddmm = b.graphOp(K::Sddmm, {in(kArg), in(kArg)});
  b.graphOp(K::EdgeSoftmax, {in(sddmm)});
  FusionProblem good = b.done();

  FusionProblem forward = good;
  forward.ops[0].operands[0].producer = 1;
  EXPECT_NE(forward.check(), "");
  FusionProblem uses = good;
  uses.ops[sddmm].numUses = 0;
  EXPECT_NE(uses.check(), "");
  FusionProblem flags = good;
  flags.ops[1].operands[0].absorbable = true;
  EXPECT_NE(flags.check(), "") << "only elementwise inputs are absorbable";
  FusionProblem edge = good;
  edge.ops[1].edgeResult = false;
  EXPECT_NE(edge.check(), "");
  FusionProblem inputs = good;
  inputs.ops[0].operands.pop_back();
  EXPECT_NE(inputs.check(), "") << "sddmm takes two inputs";
  FusionProblem graph = good;
  graph.ops[0].graph = -1;
  EXPECT_NE(graph.check(), "");

  FusionProblem side = good;
  side.ops[1].operands[0].side = true;
  EXPECT_NE(side.check(), "") << "only an edge_softmax has a side result";
  FusionProblem sideUses = good;
  sideUses.ops[0].numSideUses = 1;
  EXPECT_NE(sideUses.check(), "");

  Builder s;
  int spmm = s.graphOp(K::Spmm, {in(kArg), weights(kArg)});
  FusionProblem weighted = s.done();
  weighted.ops[spmm].weighted = false;
  EXPECT_NE(weighted.check(), "");
}

TEST(Fusion, VerifyRejectsBadPlans) {
  Gatv2 g;
  FusionProblem problem = g.b.done();
  FusionPlan good = planFusion(problem);
  ASSERT_EQ(good.verify(problem), "");

  FusionPlan missing = good;
  missing.groups.pop_back();
  EXPECT_NE(missing.verify(problem), "") << "the bias is in no group";

  FusionPlan twice = good;
  twice.groups[1].members.insert(twice.groups[1].members.begin(), g.spmm);
  EXPECT_NE(twice.verify(problem), "");

  FusionPlan unordered = good;
  std::swap(unordered.groups[0].members[4], unordered.groups[0].members[5]);
  EXPECT_NE(unordered.verify(problem), "");

  FusionPlan family = good;
  family.groups[0].family = FusionFamily::Aggregation;
  EXPECT_NE(family.verify(problem), "");

  // Leaving the score's size queries out: the sddmm's dim is used outside.
  FusionPlan sizes = good;
  sizes.groups[0].members = {g.sddmm, g.score, g.softmax, g.spmm};
  EXPECT_NE(sizes.verify(problem), "");

  // Cutting the group after the softmax: alpha escapes into the spmm.
  FusionPlan cut = good;
  cut.groups[0].members.pop_back();
  EXPECT_NE(cut.verify(problem), "");

  // The plan of the problem with fusion on is invalid once it is off.
  FusionProblem off = problem;
  off.options.attention = false;
  EXPECT_NE(good.verify(off), "");

  // An attention group whose weights are also used outside.
  Gatv2 h;
  h.b.other({h.softmax});
  FusionProblem escaping = h.b.done();
  EXPECT_NE(good.verify(escaping), "");

  FusionPlan fused = planFusion(escaping);
  ASSERT_EQ(fused.verify(escaping), "");
  fused.groups[0].fused = true;
  EXPECT_NE(fused.verify(escaping), "") << "a lone sddmm is not fused";
}

} // namespace
