//===- Fusion.h - planning the kernel groups of a function ------*- C++ -*-===//
//
// Part of gnnc. Plain C++, independent of the IR: the pass describes the ops
// of a block as a FusionProblem and applies the answer as gnn.kernel_group
// regions.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Which ops run in one kernel. The problem lists the ops of a block in
/// program order, each with the ops that produce its operands; the plan is a
/// list of groups. Graph ops, in program order, start a group by the first
/// of these rules that applies:
///  - attention: `sddmm` → a chain of elementwise ops (each the previous
///    link's only user besides size queries; reductions over trailing
///    dimensions allowed) → `edge_softmax` → a chain of elementwise ops
///    scaling the softmax (each the previous link's only user, reading it
///    as a scaled operand: attention dropout's `alpha * mask`; possibly
///    none) → `spmm sum` taking the chain's result as its weights; none
///    reversed, all on one graph;
///  - otherwise the graph op alone.
/// After the attention groups, the aggregation rule (gather-apply-reduce)
/// works on edge DAGs: a `reduce` or a weighted `spmm` (reversed or not)
/// takes the whole DAG of recomputable ops producing the edge values it
/// reads: gathers and sddmms (any kind, reversed or not) on its graph and
/// elementwise ops with an edge result that an edge loop evaluates
/// (`perEdge`), each read per edge by an op of the DAG (at the reader's own
/// edge: the identity map, or a broadcast such as a per-head value read by
/// each feature of its head, `(d0, d1, d2) -> (d0, d1)`; see `chainable`);
/// the leaves are values from outside (arguments, node tensors, materialised
/// edge tensors). An edge value read by several aggregations is
/// recomputed in each of their groups (a member of several groups, listed in
/// their `recomputed`) instead of being written to memory. It is
/// materialised, as the result of a group of its own (family `edge_map`,
/// with its own DAG when that holds a gather or sddmm), only when some
/// reader cannot recompute it: a use outside the problem, a reader in no
/// group holding it (an `edge_softmax`, a matmul, the terminator), or a read
/// other than per edge; the DAGs then stop at it, until nothing changes.
/// Backward functions of `gnn-autodiff` so keep no edge-sized temporaries:
/// `@max_bwd`'s equality mask is recomputed by its `reduce sum` and by its
/// `reduce sum reversed`; GATv2's per-head softmax gradient `ds = alpha *
/// (dalpha - sum)` (E x heads, with its score and the sddmm dot of `dalpha`)
/// by the three aggregations that scale each feature of a head by it. A
/// per-head value recomputed so costs each lane a share of the head's
/// reductions (the lowering sums a head's terms across its lanes), not an
/// E x heads write and three reads.
/// Before all of these, the node prologue (part of the aggregation family)
/// visits every `spmm` (any reduction, reversed or not) in program order:
/// when its features come from an elementwise op with parallel loops only
/// and a node result, that op and, recursively, the producers of the
/// prologue's operands that are such elementwise ops or `degree` ops of the
/// spmm's graph (reversed or not) join the spmm's group, which also holds
/// the edge DAG of its weights when the aggregation rule is on. It
/// applies only if the prologue's values are used by nothing but the
/// prologue, the spmm and the spmm's absorbed consumers (size queries
/// aside). GCN's `degree → rsqrt → h * dinv[row] → spmm → dinv * (agg + hs)`
/// becomes one group.
/// A group then absorbs the elementwise consumers of its result, one after
/// the other while each is the only user. Elementwise ops left over form a
/// group each. An intermediate of a group (recomputed ones aside) is used
/// only inside it: size queries on it (`tensor.dim`, `tensor.empty`,
/// `linalg.fill` of a constant) become members so that they can move into
/// the group with it (a recomputed op's size queries are recomputed with it
/// where a member needs them); a rule whose
/// intermediates escape does not apply, and smaller groups form instead.
/// The one exception is a side result (`edge_softmax`'s log-sum-exp): a
/// member's side result may be used outside the group, which then returns it
/// beside its result, as long as every op of the problem using it comes
/// after the group's last member (where the group is placed).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_ANALYSIS_FUSION_H
#define GNN_ANALYSIS_FUSION_H

#include <string>
#include <vector>

namespace gnn {

/// What an op is, as far as fusion cares.
enum class FusionOpKind {
  Gather,
  Sddmm,
  EdgeSoftmax,
  Spmm,
  Reduce,
  Degree,
  /// Dense `linalg` work that is not a matmul or a fill: all loops parallel,
  /// or reductions over trailing dimensions.
  Elementwise,
  /// Computes only shapes or constants: `tensor.dim`, `tensor.empty`,
  /// `linalg.fill` of a constant, `arith.constant`.
  SizeQuery,
  /// Anything else (matmuls, reshapes, the terminator, ...): never grouped.
  Other
};

/// Whether `kind` is one of the graph-level ops (gather to degree).
bool isGraphOp(FusionOpKind kind);

/// How an `spmm` or `reduce` combines values.
enum class FusionReduce { Sum, Mean, Max, Min };

/// Which operand of its user a value is.
enum class FusionSlot {
  /// The tensor operand of a graph op (`spmm`'s features, `reduce`'s and
  /// `edge_softmax`'s input, `gather`'s source, `sddmm`'s lhs and rhs) or an
  /// input of an elementwise op.
  Input,
  /// `spmm`'s weights.
  Weights,
  /// The init (outs) of an elementwise op.
  Init,
  /// Anything else (the operands of size queries and of other ops).
  Other
};

/// One operand of an op.
struct FusionOperand {
  /// The index of the op that produces the value, or -1 for a value defined
  /// outside the problem (a function argument, a value of an enclosing block).
  int producer = -1;
  FusionSlot slot = FusionSlot::Input;
  /// Elementwise ops: the op can run in its producer's kernel as an absorbed
  /// consumer (all loops parallel, this operand read with the identity map,
  /// the result shaped like it, the init not read).
  bool absorbable = false;
  /// Elementwise ops: the op can be a link of an edge chain that reads this
  /// operand (one result, parallel loops then reductions, the result written
  /// at the parallel loops, this operand read at the op's own edge: its map's
  /// first result is d0 and the others are other loop dimensions, as in the
  /// identity or a broadcast of a per-head value over the head's features).
  bool chainable = false;
  /// Elementwise ops: the op is absorbable on this operand and its result is
  /// the operand times a factor that does not depend on it (attention
  /// dropout's `alpha * mask`), so it commutes with a softmax's
  /// normalisation.
  bool scaled = false;
  /// The operand is the producer's side result (`edge_softmax`'s
  /// log-sum-exp), not its result.
  bool side = false;
};

/// One op of the block.
struct FusionOp {
  FusionOpKind kind = FusionOpKind::Other;
  /// The tensor operands (the `!gnn.graph` operand is `graph` instead).
  std::vector<FusionOperand> operands;
  /// Uses of the op's results anywhere: by ops of the problem, by the
  /// terminator, inside nested regions. Uses not listed as operands of the
  /// problem's ops count as uses outside every group. The side result's uses
  /// are `numSideUses` instead.
  int numUses = 0;
  /// `edge_softmax`: uses of its side result, the per-node log-sum-exp
  /// (anywhere, like `numUses`).
  int numSideUses = 0;
  /// Whether the result is indexed by edge.
  bool edgeResult = false;
  /// Elementwise ops: whether every loop is parallel.
  bool parallel = false;
  /// Elementwise ops with an edge result: whether an edge loop can evaluate
  /// it per edge (one result, parallel loops then reductions over trailing
  /// dimensions, indexing maps of dimensions and constants, the result
  /// written at the parallel loops, the init read only as a constant fill),
  /// so that it can be recomputed in an edge DAG.
  bool perEdge = false;
  /// Graph ops: an id of the graph they run on (equal ids, same graph).
  int graph = -1;
  /// Graph ops: the `reversed` attribute.
  bool reversed = false;
  /// `spmm`: whether it has weights (then one operand has slot Weights).
  bool weighted = false;
  /// `spmm`, `reduce`: the reduction.
  FusionReduce reduce = FusionReduce::Sum;
  /// A `relation` reduce: its edges add into its result in any order, so no
  /// consumer can run in its kernel.
  bool accumulates = false;
  /// Graph ops: the elements of a row of the result (per node or per edge;
  /// 0 when not static). An aggregator's row is what its team of lanes
  /// covers.
  long long rowElements = 0;
  /// `sddmm dot`: the elements of a row of its operands, which it sums per
  /// edge element (0 for other ops or when not static).
  long long dotElements = 0;
};

/// Which fusion rules are on.
struct FusionOptions {
  bool attention = true;
  bool aggregation = true;
  /// The node prologue of `spmm` groups (see the file comment).
  bool prologue = true;
};

/// The ops of a block in program order.
struct FusionProblem {
  std::vector<FusionOp> ops;
  FusionOptions options;
  /// Empty when the problem is well-formed, else what is wrong.
  std::string check() const;
};

/// The kind of kernel a group becomes (mirrors `#gnn.group_family`).
enum class FusionFamily {
  Attention,
  Aggregation,
  EdgeMap,
  EdgeSoftmax,
  Degree,
  Elementwise
};

/// The lower-case name of `family` ("attention", "edge_map", ...).
const char *stringifyFusionFamily(FusionFamily family);

/// One kernel.
struct FusionGroup {
  /// Op indices in program order: the graph and elementwise ops, plus the
  /// size queries on intermediates that must move into the group. The last
  /// member produces the group's result.
  std::vector<int> members;
  FusionFamily family = FusionFamily::Elementwise;
  /// The op the group starts at: its first member that is not a size query
  /// (its first graph op, a prologue's first op, or its elementwise op).
  int anchor = -1;
  /// Whether a fusion rule (attention, aggregation, prologue) formed the
  /// group.
  bool fused = false;
  /// Members other than the last whose side result the group returns after
  /// the last member's results, in program order.
  std::vector<int> sideResults;
  /// Members (ops of an edge DAG and size queries on them) that the group
  /// computes for itself although other groups hold them too or other ops
  /// read them: the pass clones them into the group instead of moving them.
  /// In program order.
  std::vector<int> recomputed;
};

/// The kernel groups of a block.
struct FusionPlan {
  /// Graph ops' groups in the program order of their first graph op, then
  /// the remaining elementwise ops' groups in program order.
  std::vector<FusionGroup> groups;
  /// Empty when the plan is valid for `problem`, else what is wrong.
  std::string verify(const FusionProblem &problem) const;
};

/// Plans the groups of `problem` (which must pass check()).
FusionPlan planFusion(const FusionProblem &problem);

} // namespace gnn

#endif // GNN_ANALYSIS_FUSION_H
