//===- KernelFamily.cpp - one record per kernel family --------------------===//
//
// Part of gnnc. See gnn/Dialect/GNN/IR/KernelFamily.h.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/KernelFamily.h"
#include "gnn/Dialect/GNN/IR/GraphBlock.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using ::gnn::FusionFamily;
using ::gnn::GroupKind;

//===----------------------------------------------------------------------===//
// Shapes: the graph ops a body holds
//===----------------------------------------------------------------------===//

static bool isEdgeProducer(StringRef name) {
  return name == "gather" || name == "sddmm";
}

static bool acceptsAttention(ArrayRef<StringRef> ops) {
  return ops == ArrayRef<StringRef>{"sddmm", "edge_softmax", "spmm"};
}

/// An spmm or a reduce after edge producers; degrees feeding an spmm's
/// features (a node prologue) may come first.
static bool acceptsAggregation(ArrayRef<StringRef> ops) {
  if (ops.empty() || !llvm::is_contained({"spmm", "reduce"}, ops.back()))
    return false;
  SmallVector<StringRef> rest(ops.drop_back());
  if (ops.back() == "spmm")
    llvm::erase(rest, StringRef("degree"));
  return llvm::all_of(rest, isEdgeProducer);
}

static bool acceptsEdgeMap(ArrayRef<StringRef> ops) {
  return !ops.empty() && llvm::all_of(ops, isEdgeProducer);
}

static bool acceptsEdgeSoftmax(ArrayRef<StringRef> ops) {
  return ops == ArrayRef<StringRef>{"edge_softmax"};
}

static bool acceptsDegree(ArrayRef<StringRef> ops) {
  return ops == ArrayRef<StringRef>{"degree"};
}

static bool acceptsNone(ArrayRef<StringRef> ops) { return ops.empty(); }

static bool acceptsExtremumGrad(ArrayRef<StringRef> ops) {
  return ops == ArrayRef<StringRef>{"extremum_grad"};
}

//===----------------------------------------------------------------------===//
// Anchors and scheduling kinds
//===----------------------------------------------------------------------===//

/// The body's first op (a dense group's).
static Operation *firstOp(Block &body) { return &body.front(); }

/// The first graph op (the only one, or an edge map's first producer).
static Operation *firstGraphOp(Block &body) {
  for (Operation &op : body.without_terminator())
    if (isa<GraphOpInterface>(op))
      return &op;
  return &body.front();
}

/// An edge map's dot-product sddmm (the one whose rows decide its lanes and
/// vectors), else its first graph op.
static Operation *edgeMapOp(Block &body) {
  for (Operation &op : body.without_terminator())
    if (auto sddmm = dyn_cast<SddmmOp>(op);
        sddmm && sddmm.getKind() == SddmmKind::dot)
      return &op;
  return firstGraphOp(body);
}

/// The spmm or reduce a fused group ends with.
static Operation *aggregationOp(Block &body) {
  Operation *anchor = &body.front();
  for (Operation &op : body.without_terminator())
    if (isa<SpmmOp, ReduceOp>(op))
      anchor = &op;
  return anchor;
}

static GroupKind attentionKind(Operation *) { return GroupKind::Attention; }

static GroupKind aggregationKind(Operation *anchor) {
  return isa<ReduceOp>(anchor) ? GroupKind::Reduce : GroupKind::Spmm;
}

static GroupKind edgeMapKind(Operation *anchor) {
  return isa<GatherOp>(anchor) ? GroupKind::Gather : GroupKind::Sddmm;
}

static GroupKind edgeSoftmaxKind(Operation *) { return GroupKind::EdgeSoftmax; }

static GroupKind degreeKind(Operation *) { return GroupKind::Degree; }

static GroupKind elementwiseKind(Operation *) { return GroupKind::Elementwise; }

//===----------------------------------------------------------------------===//
// Schedules from the analysis (gnn/Analysis/Schedule.h)
//===----------------------------------------------------------------------===//

/// Elements of one row of `value` (the product of its trailing static
/// dimensions), or 1 when it is not a ranked tensor; INT64_MAX when the
/// product overflows (which ScheduleProblem::check rejects).
static int64_t rowElements(Value value) {
  auto t = dyn_cast<RankedTensorType>(value.getType());
  if (!t || t.getRank() == 0)
    return 1;
  int64_t row = 1;
  for (int64_t d : t.getShape().drop_front())
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(row, d, row))
      return std::numeric_limits<int64_t>::max();
  return row;
}

/// The scheduling problem of a group whose schedule is chosen for `anchor`
/// as a problem of `kind`.
static ::gnn::ScheduleProblem problemFor(Operation *anchor, GroupKind kind) {
  ::gnn::ScheduleProblem p;
  p.kind = kind;
  // (An spmm's or reduce's tie counts have its result's rows.)
  if (anchor->getNumResults() == 1 || isa<SpmmOp, ReduceOp>(anchor))
    p.rowElements = rowElements(anchor->getResult(0));
  // The rows read: an spmm's input, a reduce's edge values (their storage
  // size decides the vector width).
  if (anchor->getNumOperands() > 1)
    if (auto t = dyn_cast<RankedTensorType>(anchor->getOperand(1).getType()))
      if (t.getElementType().isIntOrFloat())
        p.elementBytes = std::max<int64_t>(
            2, t.getElementType().getIntOrFloatBitWidth() / 8);
  p.trackWinner = isa<SpmmOp, ReduceOp>(anchor) && anchor->getNumResults() == 2;
  if (auto spmm = dyn_cast<SpmmOp>(anchor);
      spmm && kind == GroupKind::Attention) {
    // The feature width of one head: the spmm input's last dimension.
    int64_t inner = spmm.getInput().getType().getShape().back();
    p.innerElements = ShapedType::isDynamic(inner) ? 1 : inner;
  }
  if (auto sddmm = dyn_cast<SddmmOp>(anchor);
      sddmm && sddmm.getKind() == SddmmKind::dot) {
    // The length of one result element's dot product.
    int64_t in = rowElements(sddmm.getLhs()),
            out = rowElements(sddmm.getResult());
    if (out > 0 && in % out == 0)
      p.innerElements = in / out;
  }
  return p;
}

/// The schedule the analysis chooses for a group whose anchor (`Anchor` of
/// its body) is a problem of kind `Kind(anchor)`, in the family's one
/// mapping.
template <Operation *(*Anchor)(Block &), GroupKind (*Kind)(Operation *)>
static FailureOr<ScheduleAttr> byAnalysis(KernelGroupOp group,
                                          const ScheduleInputs &in) {
  Operation *anchor = Anchor(group.getBody().front());
  ::gnn::ScheduleProblem p = problemFor(anchor, Kind(anchor));
  p.graph = in.graph;
  if (std::string bad = p.check(); !bad.empty())
    return group.emitOpError() << "cannot be scheduled: " << bad;
  ::gnn::Schedule s = ::gnn::chooseSchedule(p);
  if (in.split >= 0 && ::gnn::splitsRows(p.kind))
    s.split = in.split;
  // chooseSchedule answers a problem that passes check() with a valid
  // schedule: lanes a power of two up to 32 dividing the block of 256, a
  // vector of 1, 2 or 4 (8 for 2-byte rows) dividing the row (and for attention
  // the head width, through their gcd), a split of 0 or at least 32 only for
  // kinds that split rows.
  assert(s.verify(p).empty() &&
         "chooseSchedule returns valid schedules for checked problems, and a "
         "split forced for kinds that split rows keeps them valid");
  const KernelFamily &family = kernelFamily(group.getFamily());
  assert(family.mappings.size() == 1 &&
         "a family scheduled by the analysis has one mapping");
  return ScheduleAttr::get(group.getContext(), family.mappings.front(), s.lanes,
                           s.block, s.vector, s.split);
}

//===----------------------------------------------------------------------===//
// The records
//===----------------------------------------------------------------------===//

static constexpr Mapping kRows[] = {Mapping::row_parallel};
static constexpr Mapping kEdges[] = {Mapping::edge_parallel};
static constexpr Mapping kElements[] = {Mapping::element_parallel};
static constexpr Mapping kBlocks[] = {Mapping::block_per_graph};

static const KernelFamily kFamilies[] = {
    {GroupFamily::attention, FusionFamily::Attention,
     "sddmm, edge_softmax, spmm", acceptsAttention, kRows,
     byAnalysis<aggregationOp, attentionKind>},
    {GroupFamily::aggregation, FusionFamily::Aggregation,
     "an spmm or a reduce, optionally after gathers and sddmms (an spmm also "
     "after degrees)",
     acceptsAggregation, kRows, byAnalysis<aggregationOp, aggregationKind>},
    {GroupFamily::edge_map, FusionFamily::EdgeMap, "gathers and sddmms",
     acceptsEdgeMap, kEdges, byAnalysis<edgeMapOp, edgeMapKind>},
    {GroupFamily::edge_softmax, FusionFamily::EdgeSoftmax, "one edge_softmax",
     acceptsEdgeSoftmax, kRows, byAnalysis<firstGraphOp, edgeSoftmaxKind>},
    {GroupFamily::degree, FusionFamily::Degree, "one degree", acceptsDegree,
     kElements, byAnalysis<firstGraphOp, degreeKind>},
    {GroupFamily::elementwise, FusionFamily::Elementwise, "none", acceptsNone,
     kElements, byAnalysis<firstOp, elementwiseKind>},
    // Never planned: gnn-form-kernel-groups wraps each extremum_grad alone.
    {GroupFamily::extremum_grad, std::nullopt, "one extremum_grad",
     acceptsExtremumGrad, kElements, byAnalysis<firstGraphOp, elementwiseKind>},
    // Never planned: its whole-function rule makes a function on small
    // graphs one group (gnn/Dialect/GNN/IR/GraphBlock.h).
    {GroupFamily::graph_block, std::nullopt, "degrees and spmms",
     acceptsGraphBlock, kBlocks, scheduleGraphBlock, "graph_block",
     formGraphBlock},
};

bool KernelFamily::implements(Mapping mapping) const {
  return llvm::is_contained(mappings, mapping);
}

ArrayRef<KernelFamily> mlir::gnn::kernelFamilies() { return kFamilies; }

const KernelFamily &mlir::gnn::kernelFamily(GroupFamily family) {
  for (const KernelFamily &f : kFamilies)
    if (f.family == family)
      return f;
  llvm_unreachable("every GroupFamily case has a record");
}

const KernelFamily &mlir::gnn::kernelFamily(FusionFamily planned) {
  for (const KernelFamily &f : kFamilies)
    if (f.planned == planned)
      return f;
  llvm_unreachable("every FusionFamily case has a record");
}

SmallVector<StringRef> mlir::gnn::graphOpNames(Block &body) {
  SmallVector<StringRef> names;
  for (Operation &op : body.without_terminator())
    if (isa<GraphOpInterface>(op))
      names.push_back(op.getName().stripDialect());
  return names;
}
