//===- GroupLowering.h - lowering kernel groups to gnnk kernels ---*- C++ -*-===//
//
// Part of gnnc. The lowering patterns of the group families and what they
// share: the parts of a group and the per-edge evaluation of fused edge
// producer chains.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_GROUPLOWERING_H
#define GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_GROUPLOWERING_H

#include "KernelBuilder.h"
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

#include <map>

namespace mlir {
namespace gnnk {

/// A kernel group split into its roles.
struct GroupParts {
  /// The op whose loop structure the kernel follows: the last graph op, or
  /// the only linalg op of a dense group.
  Operation *anchor = nullptr;
  /// Ops before the anchor (fused producers), without size queries.
  SmallVector<Operation *> producers;
  /// Elementwise consumers after the anchor, in order.
  SmallVector<linalg::GenericOp> consumers;
  /// The graph value the group's graph ops use (null for dense groups).
  Value graph;
  /// The log-sum-exp of the group's edge_softmax when the group returns it
  /// (as its second result; see gnn.edge_softmax).
  Value lse;
  /// The winner codes of the group's spmm or reduce max/min when the group
  /// returns them (as its second result; see gnn.spmm).
  Value winner;

  /// Classifies the ops of `group`; emits a diagnostic for a group whose
  /// shape no lowering handles.
  static FailureOr<GroupParts> of(gnn::KernelGroupOp group);
  /// True for ops that only describe sizes (tensor.dim, tensor.empty,
  /// linalg.fill of a constant, arith.constant).
  static bool isSizeQuery(Operation *op);
};

/// Where one edge is seen from: its CSR slot, its source and destination
/// node (as index values).
struct EdgeRef {
  Value slot, src, dst;
};

/// Evaluates elements of edge tensors produced inside a group (gather,
/// sddmm, elementwise generics on them) for one edge, without materialising
/// them; values from outside the group are loaded (edge tensors by slot).
///
/// An element is named by its row indices (one per trailing dimension), and
/// every element evaluated is remembered for the edge: a value whose row is
/// narrower than the row being produced (a per-head score read by each of a
/// head's features through a broadcast map, a rank-1 edge weight) is computed
/// once per edge and index, not once per element read. A remembered element
/// is reused only where it dominates the insertion point (not from inside
/// the loop of a reduction, nor from another edge loop's body).
class EdgeEvaluator {
public:
  EdgeEvaluator(KernelBuilder &kb, gnn::KernelGroupOp group)
      : kb(kb), group(group) {}
  /// Element `k` (flat index within the row) of edge tensor `value` at `e`.
  FailureOr<Value> element(Value value, const EdgeRef &e, Value k);
  /// The element of edge tensor `value` at `e` and row indices `idx` (one
  /// per dimension after the edge dimension).
  FailureOr<Value> elementAt(Value value, const EdgeRef &e, ValueRange idx);
  /// From now on, every element of `value` is `element` (a per-head value
  /// computed by the caller, e.g. a distributed score reduction). Forgets
  /// the elements remembered so far, which may depend on `value`.
  void setOverride(Value value, Value element) {
    overrides[value] = element;
    remembered.clear();
  }
  /// Records `element` as the element of `value` at `e` and `idx` (computed
  /// by the caller, e.g. a head's reduction shared by the lanes of a team).
  void remember(Value value, const EdgeRef &e, ValueRange idx, Value element);
  /// From now on, the dot products of sddmms are split among the `lanes`
  /// lanes of the team (`lane` being this thread's), each reading vectors of
  /// `vector` elements where that divides the product's length, and summed
  /// across the team by a `gnnk.team_reduce` (so every lane of the team must
  /// evaluate the same elements).
  void distributeDots(Value lane, int64_t lanes, int64_t vector) {
    dotLane = lane;
    dotLanes = lanes;
    dotVector = vector;
  }
  /// Whether `value` is computed by an op inside the group (size queries
  /// aside), so evaluated rather than loaded.
  bool inGroup(Value v) const;
  /// Before the elements `at` (consecutive, the first a multiple of
  /// `at.size()` in a row of `value`'s trailing shape) of edge tensor
  /// `value` are evaluated at `e`: loads the run of every gathered operand
  /// (and edge tensor from outside the group) that the evaluation will read
  /// at the same indices, through element-wise producers, as one vector
  /// access each, and remembers its elements.
  LogicalResult prefetchRun(Value value, const EdgeRef &e,
                            ArrayRef<SmallVector<Value>> at);
  /// The row of `gather`'s input that edge `e` reads, in rows of the
  /// result's size: its node, or with `relation` node * R + type(e) (the
  /// graph's `csr_type` at the edge's slot).
  Value gatheredRow(gnn::GatherOp gather, const EdgeRef &e);
  /// The body of `generic` (an op of the group's edge DAG) at `e` and loop
  /// indices `loops` (d0 the edge), with `acc` for its init's block argument.
  FailureOr<Value> bodyAt(linalg::GenericOp generic, const EdgeRef &e,
                          ValueRange loops, Value acc);

private:
  using Key = SmallVector<const void *, 6>;
  static Key keyOf(Value value, const EdgeRef &e, ValueRange idx);
  /// The element remembered for (value, e, idx) if it can be used at the
  /// insertion point, else null.
  Value recall(Value value, const EdgeRef &e, ValueRange idx) const;
  FailureOr<Value> compute(Value value, const EdgeRef &e, ValueRange idx);
  /// The dot product of `sddmm` over `length` elements from `lhs[pa]` and
  /// `rhs[pc]`, split among the team's lanes after distributeDots.
  Value dot(gnn::SddmmOp sddmm, Value lhs, Value pa, Value rhs, Value pc,
            int64_t length);
  llvm::DenseMap<Value, Value> overrides;
  Value dotLane;
  int64_t dotLanes = 1, dotVector = 1;
  std::map<Key, Value> remembered;
  KernelBuilder &kb;
  gnn::KernelGroupOp group;
};

/// The flat position within a row of `type` of the element at row indices
/// `idx` (one per dimension after the first).
Value flatIndex(KernelBuilder &kb, RankedTensorType type, ValueRange idx);

/// The row indices (after the leading dimension) of the `n` consecutive
/// elements of a row of `type` from flat position `first`, a multiple of
/// `n`. When `n` divides the innermost dimension they share every index but
/// the last, so that a value they all read at the outer indices (a head's
/// score, an edge weight) is evaluated once for them.
SmallVector<SmallVector<Value>> runIndices(KernelBuilder &kb,
                                           RankedTensorType type, Value first,
                                           int64_t n);

/// Evaluates elements of node tensors produced inside a group (graph
/// processing and node-wise elementwise ops pulled into an aggregation: GCN's
/// degree normalisation), for one node, without materialising them; values
/// from outside the group are loaded.
class NodeEvaluator {
public:
  NodeEvaluator(KernelBuilder &kb, gnn::KernelGroupOp group)
      : kb(kb), group(group) {}
  /// Element `k` (flat index within the row) of node tensor `value` at
  /// `node`.
  FailureOr<Value> element(Value value, Value node, Value k);
  /// Whether `value` is computed by a node op inside the group.
  bool computes(Value value) const;

private:
  KernelBuilder &kb;
  gnn::KernelGroupOp group;
  /// Row-constant values (rank-1 node tensors) already computed per node.
  llvm::DenseMap<std::pair<Value, Value>, Value> scalars;
};

/// The body of a sum reduction `o + t(...)`: true when `generic` yields
/// `arith.addf` of its init argument and a term that does not read it, so
/// that partial sums of the term can be added in any grouping.
bool isSumReduction(linalg::GenericOp generic);

/// How a team of `lanes` covers a row of `row` elements read `vec` at a
/// time: `featureLanes` lanes over the features (a power of two), the team's
/// other lanes in `groups` edge groups taking other edges of the row, each
/// lane holding `chunks` chunks of `vec` features `chunk` apart.
struct LanePartition {
  int64_t featureLanes = 1, groups = 1, chunk = 1, chunks = 1;
};
LanePartition partitionRow(int64_t row, int64_t lanes, int64_t vec);

/// The traversal of one row: CSR by destination, or reversed, CSC by source
/// (graph arrays, and the row's first and past-the-end positions).
struct RowTraversal {
  Value ptr, nbrs, perm;
  Value begin, end;
};
RowTraversal traverse(KernelBuilder &kb, bool reversed, Value row);

/// Creates `gnnk.for_edges` over [begin, t.end) by `step` with `inits`;
/// `body` fills the body (given the edge and the carried values) and
/// returns the values to carry on. `row` is the traversed row's node (the
/// destination, or reversed the source). Sets `status` to whether `body`
/// succeeded.
ForEdgesOp
edgeLoop(KernelBuilder &kb, const RowTraversal &t, Value begin, Value step,
         ValueRange inits, bool reversed, Value row,
         function_ref<FailureOr<SmallVector<Value>>(const EdgeRef &,
                                                    ValueRange)>
             body,
         LogicalResult &status);

/// Opens a `gnnk.for_rows` over `count` rows; returns (row, lane) and leaves
/// the builder in its body.
std::pair<Value, Value> rowMapping(KernelBuilder &kb, Value count,
                                   int64_t lanes);

/// Makes `kb.access` evaluate the group's node values with `eval`.
void evaluateNodesInGroupFor(KernelBuilder &kb, NodeEvaluator &eval);

/// The mean in-degree (edges / nodes) of the graph the module around `op` is
/// compiled for, from its `gnn.graph_stats`; none without them (or nodes).
std::optional<double> moduleMeanInDegree(Operation *op);

/// The lowering of one family's groups under one thread mapping: builds the
/// kernel(s) and the launch(es) replacing the group (the caller erases it);
/// emits a diagnostic when it fails. Most families' groups are an anchor op
/// with its producers and consumers (GroupParts); a family whose groups are
/// shaped otherwise (a whole function: graph blocks) plans them itself.
using GroupLoweringFn = LogicalResult (*)(gnn::KernelGroupOp group,
                                          GroupParts &parts, int indexBits);
using WholeGroupLoweringFn = LogicalResult (*)(gnn::KernelGroupOp group,
                                               int indexBits);

/// Matches the kernel groups of `family` whose schedule's mapping is
/// `mapping` and lowers them with `lower`. A family's pattern set
/// (`populate<Family>LoweringPatterns`, GroupLowerings.def) has one per
/// mapping its record (gnn/Dialect/GNN/IR/KernelFamily.h) lists.
class GroupLoweringPattern : public OpRewritePattern<gnn::KernelGroupOp> {
public:
  GroupLoweringPattern(MLIRContext *ctx, gnn::GroupFamily family,
                       gnn::Mapping mapping, GroupLoweringFn lower,
                       int indexBits)
      : OpRewritePattern(ctx), family(family), mapping(mapping), lower(lower),
        indexBits(indexBits) {
    name();
  }
  GroupLoweringPattern(MLIRContext *ctx, gnn::GroupFamily family,
                       gnn::Mapping mapping, WholeGroupLoweringFn lower,
                       int indexBits)
      : OpRewritePattern(ctx), family(family), mapping(mapping),
        lowerWhole(lower), indexBits(indexBits) {
    name();
  }
  LogicalResult matchAndRewrite(gnn::KernelGroupOp group,
                                PatternRewriter &rewriter) const override;

private:
  /// Names the pattern "lower-<family>-<mapping>" (its debug name), so that
  /// the patterns of a set can be told apart.
  void name() {
    debugName = ("lower-" + gnn::stringifyGroupFamily(family) + "-" +
                 gnn::stringifyMapping(mapping))
                    .str();
    setDebugName(debugName);
  }

  gnn::GroupFamily family;
  gnn::Mapping mapping;
  std::string debugName;
  GroupLoweringFn lower = nullptr;
  WholeGroupLoweringFn lowerWhole = nullptr;
  int indexBits;
};

/// The family lowerings (each file's `populate<Family>LoweringPatterns`
/// adds its own).
LogicalResult lowerElementwise(gnn::KernelGroupOp group, GroupParts &parts,
                               int indexBits);
LogicalResult lowerDegree(gnn::KernelGroupOp group, GroupParts &parts,
                          int indexBits);
LogicalResult lowerEdgeMap(gnn::KernelGroupOp group, GroupParts &parts,
                           int indexBits);
LogicalResult lowerEdgeSoftmax(gnn::KernelGroupOp group, GroupParts &parts,
                               int indexBits);
LogicalResult lowerAggregation(gnn::KernelGroupOp group, GroupParts &parts,
                               int indexBits);
/// An aggregation group ending in a `relation` reduce: an edge-parallel
/// kernel adding each edge's value into row (node, type(e)) of its result.
LogicalResult lowerRelationSum(gnn::KernelGroupOp group, GroupParts &parts,
                               int indexBits);
LogicalResult lowerAttention(gnn::KernelGroupOp group, GroupParts &parts,
                             int indexBits);
LogicalResult lowerExtremumGrad(gnn::KernelGroupOp group, GroupParts &parts,
                                int indexBits);

/// Records the heavy-row threshold of a schedule on a row kernel, for
/// gnn-split-heavy-rows.
constexpr llvm::StringLiteral kSplitAttr = "gnnk.split";

/// Ends the row mapping being built, records the schedule's split, and
/// replaces `group` by the launch of a row kernel (a team of the schedule's
/// lanes per row of `rows`, results of those rows).
void finishRowKernel(KernelBuilder &kb, gnn::KernelGroupOp group,
                     GroupParts &parts, gnn::ScheduleAttr schedule,
                     RowSpace rows);

} // namespace gnnk
} // namespace mlir

#endif // GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_GROUPLOWERING_H
