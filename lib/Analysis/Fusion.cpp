//===- Fusion.cpp - planning the kernel groups of a function --------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Fusion.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

using namespace gnn;

bool gnn::isGraphOp(FusionOpKind kind) {
  switch (kind) {
  case FusionOpKind::Gather:
  case FusionOpKind::Sddmm:
  case FusionOpKind::EdgeSoftmax:
  case FusionOpKind::Spmm:
  case FusionOpKind::Reduce:
  case FusionOpKind::Degree:
    return true;
  case FusionOpKind::Elementwise:
  case FusionOpKind::SizeQuery:
  case FusionOpKind::Other:
    break;
  }
  return false;
}

const char *gnn::stringifyFusionFamily(FusionFamily family) {
  switch (family) {
  case FusionFamily::Attention:
    return "attention";
  case FusionFamily::Aggregation:
    return "aggregation";
  case FusionFamily::EdgeMap:
    return "edge_map";
  case FusionFamily::EdgeSoftmax:
    return "edge_softmax";
  case FusionFamily::Degree:
    return "degree";
  case FusionFamily::Elementwise:
    return "elementwise";
  }
  return "unknown";
}

static bool isSizeQueryKind(FusionOpKind kind) {
  return kind == FusionOpKind::SizeQuery;
}

static std::string opName(int index) { return "op " + std::to_string(index); }

static bool isEdgeProducer(FusionOpKind kind) {
  return kind == FusionOpKind::Gather || kind == FusionOpKind::Sddmm;
}

static bool isAggregator(FusionOpKind kind) {
  return kind == FusionOpKind::Spmm || kind == FusionOpKind::Reduce;
}

/// Whether `op` can be recomputed per edge in the kernel of an op reading it:
/// a gather or sddmm, or an elementwise op with an edge result that an edge
/// loop evaluates.
static bool isRecomputable(const FusionOp &op) {
  return isEdgeProducer(op.kind) ||
         (op.kind == FusionOpKind::Elementwise && op.edgeResult && op.perEdge);
}

/// An `sddmm dot` summing at least this many elements per element of its
/// edge result is "wide": see recomputableIn.
constexpr long long kWideDot = 16;

/// Whether `op` can be recomputed per edge in the kernel of `sink` (the op
/// whose edge DAG is being formed). A wide `sddmm dot` read by an aggregator
/// whose rows are narrower than the dot's operands (GAT's backward: per-head
/// attention gradients, rows of heads, from dot products of rows of heads x
/// channels) is not: the aggregator's lanes split the edges, and each lane
/// would compute whole dot products with scalar loads from a different
/// neighbour's row (on an H200 about 4.5 times GATv2's corresponding
/// kernels). Written to memory instead, its own edge-map group computes it
/// on a team of lanes per edge element, once for every reader.
static bool recomputableIn(const FusionOp &op, const FusionOp &sink) {
  if (!isRecomputable(op))
    return false;
  bool aggregator = sink.kind == FusionOpKind::Spmm ||
                    sink.kind == FusionOpKind::Reduce;
  bool wide = op.kind == FusionOpKind::Sddmm && op.dotElements > 0 &&
              op.rowElements > 0 && op.dotElements / op.rowElements >= kWideDot;
  return !(aggregator && wide && sink.rowElements > 0 &&
           op.dotElements > sink.rowElements);
}

/// The slot through which an aggregator reads edge values (a reduce's input,
/// a weighted spmm's weights); none for other ops.
static std::optional<FusionSlot> edgeSlot(const FusionOp &op) {
  if (op.kind == FusionOpKind::Reduce)
    return FusionSlot::Input;
  if (op.kind == FusionOpKind::Spmm && op.weighted)
    return FusionSlot::Weights;
  return std::nullopt;
}

/// Whether every operand of `user` reading `value` does so per edge, at the
/// same edge (a chainable read by an elementwise op, or an aggregator's edge
/// slot), so that `value` can be evaluated inside `user`'s edge loop.
static bool readsPerEdge(const FusionProblem &p, int user, int value) {
  const FusionOp &op = p.ops[user];
  std::optional<FusionSlot> slot = edgeSlot(op);
  int reads = 0;
  for (const FusionOperand &operand : op.operands) {
    if (operand.producer != value)
      continue;
    ++reads;
    bool perEdge = op.kind == FusionOpKind::Elementwise
                       ? operand.chainable
                       : slot && operand.slot == *slot;
    if (!perEdge || operand.side)
      return false;
  }
  return reads > 0 && (op.kind == FusionOpKind::Elementwise || reads == 1);
}

/// Users of every op: (user index, operand index) pairs.
using UserLists = std::vector<std::vector<std::pair<int, int>>>;

/// The users of every op's result (`side` false) or side result (true).
static UserLists collectUsers(const FusionProblem &p, bool side = false) {
  UserLists users(p.ops.size());
  for (int j = 0, e = p.ops.size(); j < e; ++j)
    for (int k = 0, ke = p.ops[j].operands.size(); k < ke; ++k) {
      const FusionOperand &operand = p.ops[j].operands[k];
      if (operand.producer >= 0 && operand.side == side)
        users[operand.producer].push_back({j, k});
    }
  return users;
}

/// Why the side results of `members` (program order, the last producing the
/// group's result) cannot be returned by a group placed at the last member,
/// or "" when they can: each side user must come after the last member.
static std::string sideResultsEscape(const FusionProblem &p,
                                     const UserLists &sideUsers,
                                     const std::vector<int> &members) {
  int last = members.back();
  for (int m : members)
    for (auto [u, k] : sideUsers[m])
      if (u <= last)
        return opName(u) + " reads the side result of " + opName(m) +
               " before the group's last member " + opName(last);
  return "";
}

//===----------------------------------------------------------------------===//
// FusionProblem::check
//===----------------------------------------------------------------------===//

std::string FusionProblem::check() const {
  int n = ops.size();
  std::vector<int> references(n, 0), sideReferences(n, 0);
  for (int i = 0; i < n; ++i) {
    const FusionOp &op = ops[i];
    int inputs = 0, weights = 0;
    for (const FusionOperand &operand : op.operands) {
      if (operand.producer < -1 || operand.producer >= i)
        return opName(i) + " reads op " + std::to_string(operand.producer) +
               ", which does not come before it";
      if (operand.side && (operand.producer < 0 ||
                           ops[operand.producer].kind !=
                               FusionOpKind::EdgeSoftmax))
        return opName(i) + ": only an edge_softmax has a side result";
      if (operand.producer >= 0)
        ++(operand.side ? sideReferences : references)[operand.producer];
      inputs += operand.slot == FusionSlot::Input;
      weights += operand.slot == FusionSlot::Weights;
      if (operand.scaled && !operand.absorbable)
        return opName(i) + ": a scaled operand must be absorbable";
      if ((operand.absorbable || operand.chainable) &&
          (op.kind != FusionOpKind::Elementwise ||
           operand.slot != FusionSlot::Input))
        return opName(i) + ": only inputs of elementwise ops can be "
                           "absorbable or chainable";
    }
    if (op.parallel && op.kind != FusionOpKind::Elementwise)
      return opName(i) + ": only elementwise ops have parallel loops";
    if (weights && op.kind != FusionOpKind::Spmm)
      return opName(i) + ": only spmm takes weights";
    if (op.kind == FusionOpKind::Spmm && op.weighted != (weights == 1))
      return opName(i) + ": an spmm with" + (op.weighted ? "" : "out") +
             " weights has " + std::to_string(weights) + " weights operands";
    if (!isGraphOp(op.kind))
      continue;
    if (op.graph < 0)
      return opName(i) + ": a graph op needs a graph id";
    int expected = op.kind == FusionOpKind::Sddmm    ? 2
                   : op.kind == FusionOpKind::Degree ? 0
                                                     : 1;
    if (inputs != expected)
      return opName(i) + " has " + std::to_string(inputs) +
             " input operands but expects " + std::to_string(expected);
    bool edge = isEdgeProducer(op.kind) || op.kind == FusionOpKind::EdgeSoftmax;
    if (op.edgeResult != edge)
      return opName(i) + ": its result must " + (edge ? "" : "not ") +
             "be an edge tensor";
  }
  for (int i = 0; i < n; ++i) {
    if (ops[i].numUses < references[i])
      return opName(i) + " has " + std::to_string(ops[i].numUses) +
             " uses but is read by " + std::to_string(references[i]) +
             " operands";
    if (ops[i].numSideUses < sideReferences[i])
      return opName(i) + " has " + std::to_string(ops[i].numSideUses) +
             " side-result uses but is read by " +
             std::to_string(sideReferences[i]) + " operands";
    if (ops[i].numSideUses && ops[i].kind != FusionOpKind::EdgeSoftmax)
      return opName(i) + ": only an edge_softmax has a side result";
  }
  return "";
}

//===----------------------------------------------------------------------===//
// planFusion
//===----------------------------------------------------------------------===//

namespace {
/// Forms the groups one graph op at a time, in program order.
class Planner {
public:
  explicit Planner(const FusionProblem &problem)
      : p(problem), users(collectUsers(problem)),
        sideUsers(collectUsers(problem, /*side=*/true)),
        owner(problem.ops.size(), -1) {}

  FusionPlan run() {
    FusionPlan plan;
    auto take = [&](const FusionGroup &group) {
      for (int m : group.members)
        if (owner[m] < 0 || owner[m] == kReserved)
          owner[m] = plan.groups.size();
      plan.groups.push_back(group);
    };
    // The node prologues come first, so that their ops (a degree, say) do
    // not start or join other groups; their spmm's weights pull in an edge
    // DAG below.
    std::vector<std::pair<int, FusionGroup>> prologues;
    if (p.options.prologue)
      for (int i = 0, e = p.ops.size(); i < e; ++i)
        if (p.ops[i].kind == FusionOpKind::Spmm && owner[i] < 0)
          if (std::optional<FusionGroup> group = tryPrologue(i)) {
            prologue[i] = nodePrologue(i);
            reserved[i] = *group;
            for (int m : group->members)
              owner[m] = kReserved;
            prologues.push_back({i, *group});
          }
    if (p.options.attention)
      for (int i = 0, e = p.ops.size(); i < e; ++i)
        if (p.ops[i].kind == FusionOpKind::Sddmm && owner[i] < 0)
          if (std::optional<FusionGroup> group = tryAttention(i))
            take(*group);
    if (p.options.aggregation)
      for (const FusionGroup &group : edgeStage())
        take(group);
    for (const auto &[spmm, group] : prologues)
      if (owner[spmm] == kReserved)
        take(group);
    for (int i = 0, e = p.ops.size(); i < e; ++i)
      if (isGraphOp(p.ops[i].kind) && owner[i] < 0)
        take(alone(i));
    for (int i = 0, e = p.ops.size(); i < e; ++i)
      if (p.ops[i].kind == FusionOpKind::Elementwise && owner[i] < 0) {
        FusionGroup group;
        group.members = {i};
        group.family = FusionFamily::Elementwise;
        group.anchor = i;
        take(group);
      }
    // Graph ops' groups in the program order of their first graph op, then
    // elementwise groups.
    auto key = [&](const FusionGroup &g) {
      for (int m : g.members)
        if (isGraphOp(p.ops[m].kind))
          return std::make_pair(0, m);
      return std::make_pair(1, g.anchor);
    };
    std::stable_sort(plan.groups.begin(), plan.groups.end(),
                     [&](const FusionGroup &a, const FusionGroup &b) {
                       return key(a) < key(b);
                     });
    markRecomputed(plan);
    return plan;
  }

private:
  const FusionProblem &p;
  UserLists users, sideUsers;
  /// The group each op belongs to so far (-1: none; kReserved: a prologue
  /// group planned but not taken yet).
  std::vector<int> owner;
  static constexpr int kReserved = 1 << 30;
  /// The node prologue of each spmm reserved by the prologue rule.
  std::map<int, std::vector<int>> prologue;
  /// The group the prologue rule planned for each of these spmms.
  std::map<int, FusionGroup> reserved;

  bool usedOutsideProblem(int i) const {
    return p.ops[i].numUses > static_cast<int>(users[i].size());
  }
  bool isSizeQuery(int i) const {
    return p.ops[i].kind == FusionOpKind::SizeQuery;
  }

  /// The one op, size queries aside, that uses `value` and belongs to no
  /// group yet; -1 when there is none, several, or a use outside the problem.
  int soleUser(int value) const {
    if (usedOutsideProblem(value))
      return -1;
    int user = -1;
    for (auto [u, k] : users[value]) {
      if (isSizeQuery(u) || u == user)
        continue;
      if (user >= 0)
        return -1;
      user = u;
    }
    return user >= 0 && owner[user] < 0 ? user : -1;
  }

  /// Whether every operand of `user` that reads `value` satisfies `pred`, and
  /// there are exactly `count` of them (any number when `count` is 0).
  template <typename Pred>
  bool readsAs(int user, int value, Pred pred, int count = 0) const {
    int n = 0;
    for (const FusionOperand &operand : p.ops[user].operands) {
      if (operand.producer != value)
        continue;
      if (!pred(operand))
        return false;
      ++n;
    }
    return n > 0 && (count == 0 || n == count);
  }

  /// Adds to `out` the size queries that depend on `value` (directly or
  /// through other size queries); false when one of them is used by an op
  /// outside `members` and other than `extra` (or outside the problem).
  bool collectSizeQueries(int value, const std::set<int> &members,
                          std::set<int> &out, int extra = -1) const {
    std::vector<int> stack;
    for (auto [u, k] : users[value])
      if (isSizeQuery(u))
        stack.push_back(u);
    while (!stack.empty()) {
      int s = stack.back();
      stack.pop_back();
      if (!out.insert(s).second)
        continue;
      if (usedOutsideProblem(s))
        return false;
      for (auto [u, k] : users[s]) {
        if (isSizeQuery(u))
          stack.push_back(u);
        else if (u != extra && !members.count(u))
          return false;
      }
    }
    return true;
  }

  /// The elementwise consumer that can run in the kernel producing `value`
  /// (today's rule): the only use of `value` besides size queries that feed
  /// nothing but the group, an absorbable read; -1 when there is none.
  int absorbedConsumer(int value, const std::set<int> &members) const {
    if (usedOutsideProblem(value) || p.ops[value].accumulates)
      return -1;
    int consumer = -1, operand = -1, uses = 0;
    for (auto [u, k] : users[value]) {
      if (isSizeQuery(u))
        continue;
      ++uses;
      consumer = u;
      operand = k;
    }
    // With the aggregation rule, recomputable ops belong to edge DAGs.
    if (uses != 1 || owner[consumer] >= 0 ||
        p.ops[consumer].kind != FusionOpKind::Elementwise ||
        !p.ops[consumer].operands[operand].absorbable ||
        (p.options.aggregation && isRecomputable(p.ops[consumer])))
      return -1;
    std::set<int> sizes;
    return collectSizeQueries(value, members, sizes, consumer) ? consumer : -1;
  }

  /// Completes a group from its graph ops and chains (`core`, in program
  /// order, each reading an earlier one) and the node prologue of its last
  /// op (`prologue`, in program order): absorbs the consumers of the last,
  /// adds the size queries on intermediates. None when an intermediate is
  /// used outside the group, or a prologue value by an op other than the
  /// prologue, the last op of `core` and its absorbed consumers.
  std::optional<FusionGroup> finish(const std::vector<int> &core,
                                    FusionFamily family, bool fused,
                                    const std::vector<int> &prologue = {}) const {
    return finishWith(core, family, fused, prologue, -1, {});
  }

  /// finish() absorbing at most `maxConsumers` consumers (-1: any number).
  /// The `recomputed` ops of `core` (an edge DAG) may be used outside the
  /// group, which computes them for itself; their size queries join it when
  /// a member needs them.
  std::optional<FusionGroup> finishWith(const std::vector<int> &core,
                                        FusionFamily family, bool fused,
                                        const std::vector<int> &prologue,
                                        int maxConsumers,
                                        const std::set<int> &recomputed) const {
    std::vector<int> chain = core;
    std::set<int> members(core.begin(), core.end());
    members.insert(prologue.begin(), prologue.end());
    // The group moves to its last member: a side result must still come
    // before its users (only graph ops, never absorbed consumers, have side
    // results, so the earliest side read is known up front).
    int earliestSideRead = std::numeric_limits<int>::max();
    for (int m : members)
      for (auto [u, k] : sideUsers[m])
        earliestSideRead = std::min(earliestSideRead, u);
    for (int c; static_cast<int>(chain.size() - core.size()) != maxConsumers &&
                (c = absorbedConsumer(chain.back(), members)) >= 0;) {
      if (earliestSideRead <= c)
        break;
      chain.push_back(c);
      members.insert(c);
    }
    std::vector<int> inner(chain.begin(), chain.end() - 1);
    inner.insert(inner.end(), prologue.begin(), prologue.end());
    std::set<int> sizes;
    for (int m : inner) {
      if (recomputed.count(m)) {
        addNeededSizeQueries(m, members, sizes);
        continue;
      }
      if (usedOutsideProblem(m) || !collectSizeQueries(m, members, sizes))
        return std::nullopt;
      for (auto [u, k] : users[m])
        if (!isSizeQuery(u) && !members.count(u))
          return std::nullopt;
    }
    std::set<int> chainOps(core.begin(), core.end() - 1);
    for (int m : prologue)
      for (auto [u, k] : users[m])
        if (chainOps.count(u))
          return std::nullopt;
    // The group is placed at its last member, which must compute: a size
    // query after it (on an intermediate) means absorbing fewer consumers,
    // or, when none is left to drop, that the rule does not apply.
    if (!sizes.empty() && *sizes.rbegin() > chain.back()) {
      int absorbed = chain.size() - core.size();
      if (absorbed == 0)
        return std::nullopt;
      return finishWith(core, family, fused, prologue, absorbed - 1,
                        recomputed);
    }
    FusionGroup group;
    group.anchor = *members.begin();
    members.insert(sizes.begin(), sizes.end());
    group.members.assign(members.begin(), members.end());
    if (!sideResultsEscape(p, sideUsers, group.members).empty())
      return std::nullopt;
    for (int m : group.members)
      if (m != group.members.back() && p.ops[m].numSideUses)
        group.sideResults.push_back(m);
    group.family = family;
    group.fused = fused;
    return group;
  }

  /// Whether `op` can be in a node prologue as an elementwise op.
  bool isNodeWise(int op) const {
    const FusionOp &f = p.ops[op];
    return f.kind == FusionOpKind::Elementwise && f.parallel && !f.edgeResult;
  }

  /// The node prologue of `spmm` in program order (empty when there is
  /// none): the elementwise op producing its features (all loops parallel, a
  /// node result) and, recursively, the producers of the prologue's operands
  /// that are such ops or `degree` ops on the spmm's graph; ops of a group
  /// stay outside.
  std::vector<int> nodePrologue(int spmm) const {
    const FusionOp &agg = p.ops[spmm];
    if (agg.kind != FusionOpKind::Spmm)
      return {};
    int features = -1;
    for (const FusionOperand &operand : agg.operands)
      if (operand.slot == FusionSlot::Input)
        features = operand.producer;
    if (features < 0 || owner[features] >= 0 || !isNodeWise(features))
      return {};
    std::set<int> prologue;
    std::vector<int> stack = {features};
    while (!stack.empty()) {
      int m = stack.back();
      stack.pop_back();
      if (!prologue.insert(m).second)
        continue;
      for (const FusionOperand &operand : p.ops[m].operands) {
        int q = operand.producer;
        if (q < 0 || owner[q] >= 0)
          continue;
        const FusionOp &producer = p.ops[q];
        if (isNodeWise(q) || (producer.kind == FusionOpKind::Degree &&
                              producer.graph == agg.graph))
          stack.push_back(q);
      }
    }
    return {prologue.begin(), prologue.end()};
  }

  /// The node prologue rule: `spmm` with its prologue (the edge stage adds
  /// the edge DAG of its weights). None when there is no prologue, its values
  /// escape, or the attention rule takes the spmm.
  std::optional<FusionGroup> tryPrologue(int spmm) const {
    std::vector<int> prologue = nodePrologue(spmm);
    if (prologue.empty())
      return std::nullopt;
    if (p.ops[spmm].weighted && p.options.attention)
      for (int e = 0; e < spmm; ++e)
        if (p.ops[e].kind == FusionOpKind::Sddmm && owner[e] < 0)
          if (std::optional<FusionGroup> att = tryAttention(e);
              att && std::binary_search(att->members.begin(),
                                        att->members.end(), spmm))
            return std::nullopt;
    return finish({spmm}, FusionFamily::Aggregation, /*fused=*/true,
                  prologue);
  }

  /// Follows the elementwise chain from `start` (an edge tensor) while each
  /// link is its predecessor's only user; returns the chain (with `start`)
  /// and the first user that is not a link (-1 if none).
  std::pair<std::vector<int>, int> edgeChain(int start) const {
    std::vector<int> chain = {start};
    while (true) {
      int u = soleUser(chain.back());
      if (u < 0)
        return {chain, -1};
      const FusionOp &op = p.ops[u];
      if (op.kind != FusionOpKind::Elementwise)
        return {chain, u};
      if (!op.edgeResult ||
          !readsAs(u, chain.back(),
                   [](const FusionOperand &o) { return o.chainable; }))
        return {chain, -1};
      chain.push_back(u);
    }
  }

  /// sddmm → elementwise chain → edge_softmax → scaling chain → spmm sum
  /// (weighted by the scaled softmax).
  std::optional<FusionGroup> tryAttention(int sddmm) const {
    const FusionOp &score = p.ops[sddmm];
    if (score.reversed)
      return std::nullopt;
    auto [chain, softmax] = edgeChain(sddmm);
    if (softmax < 0)
      return std::nullopt;
    const FusionOp &sm = p.ops[softmax];
    auto slot = [](FusionSlot s) {
      return [s](const FusionOperand &o) { return o.slot == s; };
    };
    if (sm.kind != FusionOpKind::EdgeSoftmax || sm.reversed ||
        sm.graph != score.graph ||
        !readsAs(softmax, chain.back(), slot(FusionSlot::Input), 1))
      return std::nullopt;
    // The softmax weights scaled by elementwise ops (attention dropout).
    std::vector<int> scaling = {softmax};
    int spmm;
    while ((spmm = soleUser(scaling.back())) >= 0 &&
           p.ops[spmm].kind == FusionOpKind::Elementwise &&
           p.ops[spmm].edgeResult &&
           readsAs(
               spmm, scaling.back(),
               [](const FusionOperand &o) { return o.scaled; }, 1))
      scaling.push_back(spmm);
    if (spmm < 0)
      return std::nullopt;
    const FusionOp &agg = p.ops[spmm];
    if (agg.kind != FusionOpKind::Spmm || agg.reversed ||
        agg.reduce != FusionReduce::Sum || agg.graph != score.graph ||
        !readsAs(spmm, scaling.back(), slot(FusionSlot::Weights), 1))
      return std::nullopt;
    chain.insert(chain.end(), scaling.begin(), scaling.end());
    chain.push_back(spmm);
    return finish(chain, FusionFamily::Attention, /*fused=*/true);
  }

  //===--------------------------------------------------------------------===//
  // Edge DAGs
  //===--------------------------------------------------------------------===//

  /// The edge DAG of `sink`: the recomputable ops (no group yet, not
  /// materialised) reached from the edge values `sink` reads per edge, each
  /// read per edge by a reader in the DAG, gathers and sddmms on one graph
  /// (the sink's when it is a graph op). A materialised `sink` is part of its
  /// DAG; an aggregator is not. In program order.
  std::vector<int> edgeDag(int sink, const std::vector<char> &materialised) const {
    const FusionOp &s = p.ops[sink];
    int graph = isGraphOp(s.kind) ? s.graph : -1;
    std::set<int> dag;
    std::vector<int> stack = {sink};
    if (materialised[sink])
      dag.insert(sink);
    while (!stack.empty()) {
      int reader = stack.back();
      stack.pop_back();
      for (const FusionOperand &operand : p.ops[reader].operands) {
        int q = operand.producer;
        if (q < 0 || dag.count(q) || materialised[q] || owner[q] >= 0 ||
            !recomputableIn(p.ops[q], s) || !readsPerEdge(p, reader, q))
          continue;
        if (isGraphOp(p.ops[q].kind)) {
          if (graph < 0)
            graph = p.ops[q].graph;
          if (p.ops[q].graph != graph)
            continue;
        }
        dag.insert(q);
        stack.push_back(q);
      }
    }
    return {dag.begin(), dag.end()};
  }

  /// The group the prologue rule planned for `spmm` with the edge DAG of its
  /// weights added; none when an op of the DAG reads a prologue value or a
  /// size query the DAG needs comes after the group's last member.
  std::optional<FusionGroup> withPrologue(int spmm,
                                          const std::vector<int> &dag) const {
    FusionGroup group = reserved.at(spmm);
    std::set<int> members(group.members.begin(), group.members.end());
    for (int m : prologue.at(spmm))
      for (auto [u, k] : users[m])
        if (std::binary_search(dag.begin(), dag.end(), u))
          return std::nullopt;
    members.insert(dag.begin(), dag.end());
    std::set<int> sizes;
    for (int m : dag)
      addNeededSizeQueries(m, members, sizes);
    if (!sizes.empty() && *sizes.rbegin() > group.members.back())
      return std::nullopt;
    members.insert(sizes.begin(), sizes.end());
    group.members.assign(members.begin(), members.end());
    for (int m : group.members)
      if (!isSizeQuery(m)) {
        group.anchor = m;
        break;
      }
    return group;
  }

  /// Adds to `out` the size queries depending on `value` (directly or through
  /// other size queries) that some op of `members` needs.
  void addNeededSizeQueries(int value, const std::set<int> &members,
                            std::set<int> &out) const {
    std::set<int> reachable;
    std::vector<int> stack = {value};
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      for (auto [u, k] : users[v])
        if (isSizeQuery(u) && reachable.insert(u).second)
          stack.push_back(u);
    }
    // Users come after their operands: decide from the last one back.
    std::set<int> needed;
    for (auto it = reachable.rbegin(); it != reachable.rend(); ++it)
      for (auto [u, k] : users[*it])
        if (isSizeQuery(u) ? needed.count(u) > 0 : members.count(u) > 0) {
          needed.insert(*it);
          break;
        }
    out.insert(needed.begin(), needed.end());
  }

  /// Whether a recomputable op must be written to memory given the `groups`
  /// recomputing edge DAGs: it is used outside the problem or by nothing, or
  /// some op reading it (or a size query on it) is in no group holding it
  /// too, or reads it there other than per edge.
  bool needsMaterialising(int q, const std::vector<FusionGroup> &groups) const {
    if (usedOutsideProblem(q) || p.ops[q].numUses == 0)
      return true;
    auto holds = [](const FusionGroup &g, int op) {
      return std::binary_search(g.members.begin(), g.members.end(), op);
    };
    // A direct reader is covered when every group recomputing it recomputes
    // `q` too (an edge DAG may stop above `q` where another does not: a wide
    // dot, a graph op on another graph), reading it per edge.
    auto covered = [&](int user, bool direct) {
      bool any = false;
      for (const FusionGroup &g : groups) {
        if (!holds(g, user))
          continue;
        if (!holds(g, q)) {
          if (direct)
            return false;
          continue;
        }
        if (direct && !readsPerEdge(p, user, q))
          return false;
        any = true;
      }
      return any;
    };
    std::vector<int> stack;
    for (auto [u, k] : users[q]) {
      if (isSizeQuery(u))
        stack.push_back(u);
      else if (!covered(u, /*direct=*/true))
        return true;
    }
    std::set<int> seen;
    while (!stack.empty()) {
      int s = stack.back();
      stack.pop_back();
      if (!seen.insert(s).second)
        continue;
      // The original size query must go, so a group holding q holds it.
      if (usedOutsideProblem(s) || !covered(s, /*direct=*/false))
        return true;
      for (auto [u, k] : users[s]) {
        if (isSizeQuery(u))
          stack.push_back(u);
        else if (!covered(u, /*direct=*/false))
          return true;
      }
    }
    return std::none_of(groups.begin(), groups.end(), [&](const FusionGroup &g) {
      return holds(g, q);
    });
  }

  /// The aggregation rule over edge DAGs: every `reduce` and weighted `spmm`
  /// (reversed or not) with no group yet, or with a node prologue, takes the
  /// edge DAG of its edge values, recomputing values that other groups
  /// recompute too. A recomputable op is materialised (a group of its own
  /// with its DAG) only when some reader cannot recompute it; the DAGs then
  /// stop at it, which may materialise more, until nothing changes.
  std::vector<FusionGroup> edgeStage() const {
    int n = p.ops.size();
    std::vector<char> noDag(n, 0);
    while (true) {
      std::vector<char> materialised(n, 0);
      std::optional<std::vector<FusionGroup>> groups =
          edgeGroups(materialised, noDag);
      // Readers come after what they read: deciding from the last op back,
      // a reader's groups are mostly final when its producer is decided.
      // Not always: materialising an op cuts the DAGs below it, and a
      // materialised op whose DAG loses its last graph op keeps no DAG at
      // all, so a value it covered above may lose its reader's group. The
      // passes repeat until one materialises nothing (materialised only
      // grows).
      for (bool changed = true; changed && groups;) {
        changed = false;
        for (int q = n - 1; q >= 0 && groups; --q)
          if (!materialised[q] && owner[q] < 0 && isRecomputable(p.ops[q]) &&
              needsMaterialising(q, *groups)) {
            materialised[q] = 1;
            changed = true;
            groups = edgeGroups(materialised, noDag);
          }
      }
      if (groups)
        return *groups;
    }
  }

  /// The groups of the edge stage given the `materialised` ops: one per
  /// aggregator with its DAG, one per materialised op with its own. None
  /// when an aggregator cannot take its DAG; it is then marked in `noDag`
  /// (and runs without it).
  std::optional<std::vector<FusionGroup>>
  edgeGroups(const std::vector<char> &materialised,
             std::vector<char> &noDag) const {
    int n = p.ops.size();
    std::vector<FusionGroup> groups;
    std::set<int> absorbed;
    for (int s = 0; s < n; ++s) {
      if (!edgeSlot(p.ops[s]) || noDag[s] ||
          (owner[s] >= 0 && owner[s] != kReserved))
        continue;
      std::vector<int> dag = edgeDag(s, materialised);
      if (dag.empty())
        continue;
      std::vector<int> core = dag;
      core.push_back(s);
      std::set<int> recomputed(dag.begin(), dag.end());
      std::optional<FusionGroup> group;
      if (owner[s] == kReserved) {
        group = withPrologue(s, dag);
      } else {
        // A consumer reading two aggregations is absorbed once.
        group = finishWith(core, FusionFamily::Aggregation, /*fused=*/true, {},
                           -1, recomputed);
        if (group && group->members.back() != s &&
            absorbed.count(group->members.back()))
          group = finishWith(core, FusionFamily::Aggregation, /*fused=*/true,
                             {}, 0, recomputed);
      }
      if (!group) {
        noDag[s] = 1;
        return std::nullopt;
      }
      for (auto it = group->members.rbegin(); *it != s; ++it)
        absorbed.insert(*it);
      groups.push_back(*group);
    }
    for (int m = 0; m < n; ++m) {
      if (!materialised[m])
        continue;
      std::vector<int> dag = edgeDag(m, materialised);
      int graphOps = std::count_if(dag.begin(), dag.end(), [&](int op) {
        return isGraphOp(p.ops[op].kind);
      });
      std::set<int> recomputed(dag.begin(), dag.end());
      recomputed.erase(m);
      // Consumers that no DAG can take (their result's domain unknown, say)
      // are absorbed as before.
      // A consumer reading two materialised values is absorbed once.
      std::optional<FusionGroup> group;
      if (graphOps) {
        group = finishWith(dag, FusionFamily::EdgeMap, graphOps > 1, {}, -1,
                           recomputed);
        if (group && group->members.back() != m &&
            absorbed.count(group->members.back()))
          group = finishWith(dag, FusionFamily::EdgeMap, graphOps > 1, {}, 0,
                             recomputed);
      }
      if (!group) {
        bool graphOp = isGraphOp(p.ops[m].kind);
        group = finishWith(
            {m}, graphOp ? FusionFamily::EdgeMap : FusionFamily::Elementwise,
            /*fused=*/false, {}, graphOp ? -1 : 0, {});
        if (group->members.back() != m && absorbed.count(group->members.back()))
          group = finishWith({m}, FusionFamily::EdgeMap, /*fused=*/false, {},
                             0, {});
      }
      for (auto it = group->members.rbegin(); *it != m; ++it)
        absorbed.insert(*it);
      groups.push_back(*group);
    }
    return groups;
  }

  /// Records in each group the members it computes for itself: those in
  /// several groups or used outside the group.
  void markRecomputed(FusionPlan &plan) const {
    std::vector<int> count(p.ops.size(), 0);
    for (const FusionGroup &g : plan.groups)
      for (int m : g.members)
        ++count[m];
    for (FusionGroup &g : plan.groups) {
      g.recomputed.clear();
      for (int m : g.members) {
        if (m == g.members.back())
          continue;
        bool escapes = count[m] > 1 || usedOutsideProblem(m);
        for (auto [u, k] : users[m])
          escapes |= !std::binary_search(g.members.begin(), g.members.end(), u);
        if (escapes && (isRecomputable(p.ops[m]) || isSizeQuery(m)))
          g.recomputed.push_back(m);
      }
    }
  }

  /// A graph op with its absorbed consumers (no fusion).
  FusionGroup alone(int op) const {
    FusionFamily family = FusionFamily::Aggregation;
    switch (p.ops[op].kind) {
    case FusionOpKind::Gather:
    case FusionOpKind::Sddmm:
      family = FusionFamily::EdgeMap;
      break;
    case FusionOpKind::EdgeSoftmax:
      family = FusionFamily::EdgeSoftmax;
      break;
    case FusionOpKind::Degree:
      family = FusionFamily::Degree;
      break;
    default:
      break;
    }
    // A single graph op has no intermediate that could escape.
    return *finish({op}, family, /*fused=*/false);
  }
};
} // namespace

FusionPlan gnn::planFusion(const FusionProblem &problem) {
  return Planner(problem).run();
}

//===----------------------------------------------------------------------===//
// FusionPlan::verify
//===----------------------------------------------------------------------===//

/// Whether graph ops of these kinds, in this order, make a group of `family`.
static bool familyFits(FusionFamily family,
                       const std::vector<FusionOpKind> &graphOps) {
  using K = FusionOpKind;
  size_t n = graphOps.size();
  switch (family) {
  case FusionFamily::Attention:
    return graphOps == std::vector<K>{K::Sddmm, K::EdgeSoftmax, K::Spmm};
  case FusionFamily::Aggregation: {
    // Degrees of a node prologue aside.
    std::vector<K> core;
    for (K kind : graphOps)
      if (kind != K::Degree)
        core.push_back(kind);
    n = core.size();
    return n >= 1 && isAggregator(core.back()) &&
           std::all_of(core.begin(), core.end() - 1, isEdgeProducer) &&
           (n == graphOps.size() || core.back() == K::Spmm);
  }
  case FusionFamily::EdgeMap:
    return n >= 1 && std::all_of(graphOps.begin(), graphOps.end(),
                                 isEdgeProducer);
  case FusionFamily::EdgeSoftmax:
    return n == 1 && graphOps.front() == K::EdgeSoftmax;
  case FusionFamily::Degree:
    return n == 1 && graphOps.front() == K::Degree;
  case FusionFamily::Elementwise:
    return n == 0;
  }
  return false;
}

/// The members of an aggregation group's node prologue: its degrees and the
/// elementwise ops with a node result before its aggregator.
static std::vector<int> prologueOf(const FusionProblem &p,
                                   const FusionGroup &g) {
  std::vector<int> prologue;
  if (g.family != FusionFamily::Aggregation)
    return prologue;
  int sink = -1;
  for (int m : g.members)
    if (isAggregator(p.ops[m].kind))
      sink = m;
  for (int m : g.members)
    if (m < sink && (p.ops[m].kind == FusionOpKind::Degree ||
                     (p.ops[m].kind == FusionOpKind::Elementwise &&
                      !p.ops[m].edgeResult)))
      prologue.push_back(m);
  return prologue;
}

/// Checks what the node prologue rule promises.
static std::string verifyPrologue(const FusionProblem &p, const FusionGroup &g,
                                  const std::vector<int> &prologue, int sink) {
  const FusionOp &agg = p.ops[sink];
  auto inPrologue = [&](int op) {
    return std::binary_search(prologue.begin(), prologue.end(), op);
  };
  bool fed = false;
  for (const FusionOperand &operand : agg.operands)
    fed |= operand.slot == FusionSlot::Input && inPrologue(operand.producer);
  if (!fed)
    return opName(sink) + " does not aggregate the prologue's value";
  for (int m : prologue) {
    const FusionOp &op = p.ops[m];
    if (op.kind == FusionOpKind::Degree ? op.graph != agg.graph
                                        : !op.parallel)
      return opName(m) + " cannot be in the prologue of " + opName(sink);
  }
  return "";
}

/// Checks what the fusion rules promise about a fused group's graph ops.
static std::string verifyFused(const FusionProblem &p, const FusionGroup &g,
                               std::vector<int> graphOps) {
  std::vector<int> prologue = prologueOf(p, g);
  if (!prologue.empty()) {
    if (std::string bad = verifyPrologue(p, g, prologue, graphOps.back());
        !bad.empty())
      return bad;
    std::vector<int> core;
    for (int m : graphOps)
      if (p.ops[m].kind != FusionOpKind::Degree)
        core.push_back(m);
    // Only the edge rule needs a forward graph.
    if (core.size() == 1)
      return "";
    graphOps = core;
  }
  for (int m : graphOps) {
    if (p.ops[m].reversed && g.family == FusionFamily::Attention)
      return opName(m) + " runs over the reversed graph";
    if (p.ops[m].graph != p.ops[graphOps.front()].graph)
      return opName(m) + " runs on another graph than " +
             opName(graphOps.front());
  }
  // A recomputed value is read per edge by every member reading it.
  for (int m : g.members)
    for (const FusionOperand &operand : p.ops[m].operands)
      if (std::binary_search(g.recomputed.begin(), g.recomputed.end(),
                             operand.producer) &&
          !isSizeQueryKind(p.ops[m].kind) &&
          !isSizeQueryKind(p.ops[operand.producer].kind) &&
          !readsPerEdge(p, m, operand.producer))
        return opName(m) + " reads the recomputed " +
               opName(operand.producer) + " other than per edge";
  if (g.family == FusionFamily::EdgeMap)
    return "";
  const FusionOp &sink = p.ops[graphOps.back()];
  FusionSlot slot =
      sink.kind == FusionOpKind::Spmm ? FusionSlot::Weights : FusionSlot::Input;
  if (g.family == FusionFamily::Attention && sink.reduce != FusionReduce::Sum)
    return opName(graphOps.back()) + " is not an spmm sum";
  // Between the softmax and the spmm, only ops scaling the softmax weights.
  if (g.family == FusionFamily::Attention)
    for (int m : g.members) {
      if (m <= graphOps[1] || m >= graphOps.back() ||
          p.ops[m].kind != FusionOpKind::Elementwise)
        continue;
      bool scales = false;
      for (const FusionOperand &operand : p.ops[m].operands)
        scales |= operand.scaled && operand.producer >= graphOps[1];
      if (!scales)
        return opName(m) + " does not scale the softmax weights of " +
               opName(graphOps.back());
    }
  for (const FusionOperand &operand : sink.operands)
    if (operand.slot == slot &&
        std::binary_search(g.members.begin(), g.members.end(),
                           operand.producer))
      return "";
  return opName(graphOps.back()) + " does not aggregate the group's " +
         (slot == FusionSlot::Weights ? "weights" : "edge values");
}

/// Whether `op` is a member of `g`.
static bool holds(const FusionGroup &g, int op) {
  return std::binary_search(g.members.begin(), g.members.end(), op);
}

/// Whether `g` recomputes `op`.
static bool recomputes(const FusionGroup &g, int op) {
  return std::binary_search(g.recomputed.begin(), g.recomputed.end(), op);
}

namespace {
/// Checks a plan against its problem group by group, then as a whole; keeps
/// what the later checks read about the groups already seen.
class PlanVerifier {
public:
  PlanVerifier(const FusionProblem &p, const std::vector<FusionGroup> &groups);

  /// Why group `gi` breaks a rule, or "" (checks the groups in order).
  std::string verifyGroup(int gi);
  /// Why a group computes for itself other than exactly what it shares
  /// with other groups or ops, or "".
  std::string verifySharing() const;
  /// Why a graph or elementwise op is in no group, or "".
  std::string verifyCovered() const;

private:
  /// Checks the members of group `gi` (in the problem, in program order,
  /// held by several groups only when recomputed, never an ungroupable op,
  /// starting at the anchor, not ending with a size query) and notes their
  /// owners; returns its graph ops and first member that is not a size
  /// query in `graphOps` and `first`.
  std::string verifyMembers(int gi, const std::string &where,
                            std::vector<int> &graphOps, int &first);
  /// Checks that the graph ops make the group's family, that `fused` says
  /// whether a fusion rule formed it, and that the rules it needs are on.
  std::string verifyFamily(const FusionGroup &g, const std::string &where,
                           const std::vector<int> &graphOps, int first,
                           const std::vector<int> &prologue) const;
  /// Checks that the recomputed members are inner members, in order.
  std::string verifyRecomputed(const FusionGroup &g,
                               const std::string &where) const;
  /// Checks that the group returns exactly the side results of its members
  /// used outside it, and can return them where it is placed.
  std::string verifySideResults(const FusionGroup &g,
                                const std::string &where) const;
  /// Checks that the group is connected in dependence order and closed:
  /// intermediates are used only inside it.
  std::string verifyClosed(const FusionGroup &g, const std::string &where,
                           int first, const std::vector<int> &prologue) const;
  /// Whether member `m` of `g` reads an earlier member (or, in a prologue or
  /// an edge DAG, connects through its users).
  bool readsEarlierMember(const FusionGroup &g, int m,
                          const std::vector<int> &prologue) const;
  /// Why the value of `m`, an inner member of `g`, is used outside it, or
  /// "": a recomputed value used elsewhere is recomputed there too, or
  /// written to memory by another group.
  std::string verifyInnerUses(const FusionGroup &g, int m) const;

  const FusionProblem &p;
  const std::vector<FusionGroup> &groups;
  int n;
  UserLists users;
  UserLists sideUsers;
  /// Per op: the first group holding it (-1 while none), and how many do.
  std::vector<int> owner, count;
  /// Per op: whether its value is written to memory (a group result or side
  /// result).
  std::vector<char> available;
};
} // namespace

PlanVerifier::PlanVerifier(const FusionProblem &p,
                           const std::vector<FusionGroup> &groups)
    : p(p), groups(groups), n(p.ops.size()), users(collectUsers(p)),
      sideUsers(collectUsers(p, /*side=*/true)), owner(n, -1), count(n, 0),
      available(n, 0) {
  for (const FusionGroup &g : groups) {
    if (!g.members.empty() && g.members.back() >= 0 && g.members.back() < n)
      available[g.members.back()] = 1;
    for (int m : g.sideResults)
      if (m >= 0 && m < n)
        available[m] = 1;
  }
}

std::string PlanVerifier::verifyMembers(int gi, const std::string &where,
                                        std::vector<int> &graphOps,
                                        int &first) {
  const FusionGroup &g = groups[gi];
  if (g.members.empty())
    return where + " has no member";
  for (size_t i = 0; i < g.members.size(); ++i) {
    int m = g.members[i];
    if (m < 0 || m >= n)
      return where + " has member " + std::to_string(m) +
             ", which is not an op of the problem";
    if (i && m <= g.members[i - 1])
      return where + ": members are not in program order";
    if (owner[m] >= 0 &&
        !(recomputes(g, m) && (isRecomputable(p.ops[m]) ||
                               p.ops[m].kind == FusionOpKind::SizeQuery)))
      return opName(m) + " is in groups " + std::to_string(owner[m]) + " and " +
             std::to_string(gi) + " but is not recomputed";
    if (owner[m] < 0)
      owner[m] = gi;
    ++count[m];
    FusionOpKind kind = p.ops[m].kind;
    if (kind == FusionOpKind::Other)
      return where + " holds " + opName(m) + ", which is never grouped";
    if (isGraphOp(kind))
      graphOps.push_back(m);
    if (kind != FusionOpKind::SizeQuery && first < 0)
      first = m;
  }
  if (p.ops[g.members.back()].kind == FusionOpKind::SizeQuery)
    return where + " ends with a size query";
  if (g.anchor != first)
    return where + " does not start at its anchor " + opName(g.anchor);
  return "";
}

std::string PlanVerifier::verifyFamily(const FusionGroup &g,
                                       const std::string &where,
                                       const std::vector<int> &graphOps,
                                       int first,
                                       const std::vector<int> &prologue) const {
  std::vector<FusionOpKind> kinds;
  for (int m : graphOps)
    kinds.push_back(p.ops[m].kind);
  if (!familyFits(g.family, kinds))
    return where + " holds graph ops that do not make this family";
  bool fusesSomething =
      g.family == FusionFamily::Attention ||
      (g.family == FusionFamily::Aggregation && first != graphOps.back()) ||
      (g.family == FusionFamily::EdgeMap && graphOps.size() > 1);
  if (g.fused != fusesSomething)
    return where + (g.fused ? " is marked fused but is not"
                            : " is fused but not marked so");
  if (g.family == FusionFamily::Attention && !p.options.attention)
    return where + ": attention fusion is off";
  if (!prologue.empty() && !p.options.prologue)
    return where + ": prologue fusion is off";
  if (g.fused && g.family == FusionFamily::Aggregation &&
      !p.options.aggregation &&
      std::any_of(graphOps.begin(), graphOps.end(),
                  [&](int m) { return isEdgeProducer(p.ops[m].kind); }))
    return where + ": aggregation fusion is off";
  if (g.fused)
    if (std::string bad = verifyFused(p, g, graphOps); !bad.empty())
      return where + ": " + bad;
  return "";
}

std::string PlanVerifier::verifyRecomputed(const FusionGroup &g,
                                           const std::string &where) const {
  if (!std::is_sorted(g.recomputed.begin(), g.recomputed.end()))
    return where + ": recomputed members are not in program order";
  for (int m : g.recomputed) {
    if (!holds(g, m) || m == g.members.back())
      return where + " recomputes " + opName(m) +
             ", which is not one of its inner members";
  }
  return "";
}

std::string PlanVerifier::verifySideResults(const FusionGroup &g,
                                            const std::string &where) const {
  std::vector<int> sides;
  for (int m : g.members)
    if (m != g.members.back() && p.ops[m].numSideUses)
      sides.push_back(m);
  if (sides != g.sideResults)
    return where + " does not return the side results of its members "
                   "used outside it";
  if (std::string bad = sideResultsEscape(p, sideUsers, g.members);
      !bad.empty())
    return where + ": " + bad;
  return "";
}

bool PlanVerifier::readsEarlierMember(const FusionGroup &g, int m,
                                      const std::vector<int> &prologue) const {
  bool size = p.ops[m].kind == FusionOpKind::SizeQuery;
  // A prologue op or an op of an edge DAG connects through its users.
  bool connected =
      (std::binary_search(prologue.begin(), prologue.end(), m) ||
       isRecomputable(p.ops[m])) &&
      std::any_of(users[m].begin(), users[m].end(),
                  [&](std::pair<int, int> use) { return holds(g, use.first); });
  for (const FusionOperand &operand : p.ops[m].operands)
    connected |=
        operand.producer >= 0 && holds(g, operand.producer) &&
        (size || p.ops[operand.producer].kind != FusionOpKind::SizeQuery);
  return connected;
}

std::string PlanVerifier::verifyInnerUses(const FusionGroup &g, int m) const {
  bool recomputed = recomputes(g, m);
  if (p.ops[m].numUses > static_cast<int>(users[m].size()) &&
      !(recomputed && available[m]))
    return opName(m) + " is used outside the problem";
  for (auto [u, k] : users[m]) {
    if (holds(g, u))
      continue;
    if (recomputed &&
        (available[m] || p.ops[u].kind == FusionOpKind::SizeQuery ||
         std::any_of(groups.begin(), groups.end(), [&](const FusionGroup &h) {
           return holds(h, m) && holds(h, u);
         })))
      continue;
    return opName(m) + " is used by " + opName(u) + " outside the group";
  }
  return "";
}

std::string PlanVerifier::verifyClosed(const FusionGroup &g,
                                       const std::string &where, int first,
                                       const std::vector<int> &prologue) const {
  for (int m : g.members) {
    if (m != first && !readsEarlierMember(g, m, prologue))
      return where + ": " + opName(m) + " does not read an earlier member";
    if (m == g.members.back())
      continue;
    if (std::string bad = verifyInnerUses(g, m); !bad.empty())
      return where + ": " + bad;
  }
  return "";
}

std::string PlanVerifier::verifyGroup(int gi) {
  const FusionGroup &g = groups[gi];
  std::string where = "group " + std::to_string(gi) + " (" +
                      stringifyFusionFamily(g.family) + ")";
  std::vector<int> graphOps;
  int first = -1;
  if (std::string bad = verifyMembers(gi, where, graphOps, first); !bad.empty())
    return bad;
  std::vector<int> prologue = prologueOf(p, g);
  if (std::string bad = verifyFamily(g, where, graphOps, first, prologue);
      !bad.empty())
    return bad;
  if (std::string bad = verifyRecomputed(g, where); !bad.empty())
    return bad;
  if (std::string bad = verifySideResults(g, where); !bad.empty())
    return bad;
  return verifyClosed(g, where, first, prologue);
}

std::string PlanVerifier::verifySharing() const {
  for (int gi = 0, ge = groups.size(); gi < ge; ++gi) {
    const FusionGroup &g = groups[gi];
    for (int m : g.members) {
      if (m == g.members.back())
        continue;
      bool shares = count[m] > 1 || users[m].size() < (size_t)p.ops[m].numUses;
      for (auto [u, k] : users[m])
        shares |= !holds(g, u);
      bool recomputed = recomputes(g, m);
      if (recomputed && !shares)
        return "group " + std::to_string(gi) + " recomputes " + opName(m) +
               ", which no other op reads";
      if (!recomputed && count[m] > 1)
        return "group " + std::to_string(gi) + " does not recompute " +
               opName(m) + ", which another group holds too";
    }
  }
  return "";
}

std::string PlanVerifier::verifyCovered() const {
  for (int i = 0; i < n; ++i)
    if ((isGraphOp(p.ops[i].kind) ||
         p.ops[i].kind == FusionOpKind::Elementwise) &&
        owner[i] < 0)
      return opName(i) + " is in no group";
  return "";
}

std::string FusionPlan::verify(const FusionProblem &p) const {
  PlanVerifier verifier(p, groups);
  for (int gi = 0, ge = groups.size(); gi < ge; ++gi)
    if (std::string bad = verifier.verifyGroup(gi); !bad.empty())
      return bad;
  // What a group computes for itself is exactly what it shares.
  if (std::string bad = verifier.verifySharing(); !bad.empty())
    return bad;
  return verifier.verifyCovered();
}
