//===- FormKernelGroups.cpp - fuse graph ops into kernel groups -----------===//
//
// Part of gnnc. The groups are planned by gnn/Analysis/Fusion.h; this pass
// only describes the ops as a FusionProblem and applies the plan.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Fusion.h"
#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GraphStatsAttr.h"
#include "gnn/Dialect/GNN/IR/KernelFamily.h"
#include "gnn/Dialect/GNN/Transforms/GemmBias.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"
#include "gnn/Dialect/GNN/Transforms/ScaledOperand.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNFORMKERNELGROUPS
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

using ::gnn::FusionFamily;
using ::gnn::FusionOpKind;
using ::gnn::FusionSlot;

/// The short name of a graph op, used to name its group ("spmm_0").
static StringRef kindName(Operation *op) {
  if (isa<SpmmOp>(op))
    return "spmm";
  if (isa<ReduceOp>(op))
    return "reduce";
  if (isa<EdgeSoftmaxOp>(op))
    return "edge_softmax";
  if (isa<SddmmOp>(op))
    return "sddmm";
  if (isa<GatherOp>(op))
    return "gather";
  if (isa<DegreeOp>(op))
    return "degree";
  if (isa<ExtremumGradOp>(op))
    return "extremum_grad";
  return "elementwise";
}

//===----------------------------------------------------------------------===//
// Describing the IR
//===----------------------------------------------------------------------===//

/// An elementwise consumer that can run in the producer's kernel: all loops
/// parallel, one result shaped like `producer`, `producer` read with the
/// identity map, every map a projected permutation (constants allowed:
/// GIN's `eps`, AGNN's `beta` broadcast with `(d0, d1) -> (0)`), and the
/// init not read.
static bool isAbsorbableConsumer(linalg::GenericOp generic, Value producer) {
  if (generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 || !generic.hasPureTensorSemantics())
    return false;
  if (generic->getResult(0).getType() != producer.getType())
    return false;
  bool readsProducer = false;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(in);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    if (in->get() == producer) {
      if (!map.isIdentity())
        return false;
      readsProducer = true;
    }
  }
  OpOperand *init = generic.getDpsInitOperand(0);
  if (!generic.getMatchingIndexingMap(init).isIdentity() ||
      generic.payloadUsesValueFromOperand(init))
    return false;
  return readsProducer;
}

/// An op that an edge loop evaluates per edge: one result, the loops
/// parallel then reductions (GATv2's `sum_d att[h, d] * leaky(e[edge, h,
/// d])`), the result written at the parallel loops in order, every operand
/// (small dense tensors, constants such as AGNN's `beta` broadcast with
/// `(d0) -> (0)`) indexed by loops and constants only; the init is read only
/// when it is a constant fill (an accumulator's start, autodiff's `out + x`
/// on zeros).
static bool isEdgeLoopOp(linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      !generic.hasPureTensorSemantics())
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  unsigned parallel = 0;
  while (parallel < iterators.size() &&
         iterators[parallel] == utils::IteratorType::parallel)
    ++parallel;
  if (parallel == 0 || llvm::any_of(ArrayRef(iterators).drop_front(parallel),
                                    [](utils::IteratorType t) {
                                      return t !=
                                             utils::IteratorType::reduction;
                                    }))
    return false;
  if (!llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap map) {
        return llvm::all_of(map.getResults(), [](AffineExpr e) {
          return isa<AffineDimExpr, AffineConstantExpr>(e);
        });
      }))
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  AffineMap initMap = generic.getMatchingIndexingMap(init);
  if (initMap.getNumResults() != parallel)
    return false;
  for (unsigned i = 0; i < parallel; ++i)
    if (initMap.getResult(i) != getAffineDimExpr(i, generic.getContext()))
      return false;
  if (!generic.payloadUsesValueFromOperand(init))
    return true;
  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant());
}

/// A link of an edge chain (or an op of an edge DAG) reading `operand` per
/// edge: an edge loop op reading it as an input at its own edge, by loop
/// dimensions (the map's first result is d0, no other result is, and none is
/// a constant): the identity, or a broadcast such as GATv2's backward
/// `(d0, d1, d2) -> (d0, d1)` scaling each feature of a head by the head's
/// value.
static bool isChainLink(linalg::GenericOp generic, OpOperand &operand) {
  if (!generic.isDpsInput(&operand) || !isEdgeLoopOp(generic))
    return false;
  AffineMap map = generic.getMatchingIndexingMap(&operand);
  for (auto [r, e] : llvm::enumerate(map.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || (r == 0) != (d.getPosition() == 0))
      return false;
  }
  return map.getNumResults() > 0;
}

/// Ops that compute only shapes or constants, free to move with their users.
static bool isSizeQuery(Operation *op) {
  if (isa<tensor::DimOp, tensor::EmptyOp, arith::ConstantOp>(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics() &&
           matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant());
  return false;
}

/// The elements of a row of `value` (its shape past the leading node or
/// edge dimension), 0 when they are not static.
static long long rowElementsOf(Value value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasRank() || type.getRank() < 1)
    return 0;
  long long elements = 1;
  for (int64_t d : type.getShape().drop_front()) {
    if (ShapedType::isDynamic(d))
      return 0;
    elements *= d;
  }
  return elements;
}

static FusionOpKind kindOf(Operation *op) {
  if (isa<GatherOp>(op))
    return FusionOpKind::Gather;
  if (isa<SddmmOp>(op))
    return FusionOpKind::Sddmm;
  if (isa<EdgeSoftmaxOp>(op))
    return FusionOpKind::EdgeSoftmax;
  if (isa<SpmmOp>(op))
    return FusionOpKind::Spmm;
  if (isa<ReduceOp>(op))
    return FusionOpKind::Reduce;
  if (isa<DegreeOp>(op))
    return FusionOpKind::Degree;
  if (isSizeQuery(op))
    return FusionOpKind::SizeQuery;
  // A bias only GEMMs start from: added in their epilogues, no kernel; a
  // ReLU of a GEMM's result run in that GEMM's epilogue: no kernel; a bias
  // gradient a GEMM's row split sums beside its weight's: no kernel.
  if (auto generic = dyn_cast<linalg::GenericOp>(op);
      generic && runsInAGemm(generic))
    return FusionOpKind::Other;
  // Dense work: every linalg op on tensors but matmuls (cuBLAS calls) and
  // fills.
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    if (!isa<linalg::MatmulOp, linalg::FillOp>(op) &&
        linalgOp.hasPureTensorSemantics())
      return FusionOpKind::Elementwise;
  return FusionOpKind::Other;
}

static ::gnn::FusionReduce toPlanner(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::sum:
    return ::gnn::FusionReduce::Sum;
  case ReduceKind::mean:
    return ::gnn::FusionReduce::Mean;
  case ReduceKind::max:
    return ::gnn::FusionReduce::Max;
  case ReduceKind::min:
    return ::gnn::FusionReduce::Min;
  }
  return ::gnn::FusionReduce::Sum;
}

namespace {
/// The ops of one block and the fusion problem describing them (op `i` of
/// the problem is `ops[i]`).
struct BlockProblem {
  SmallVector<Operation *> ops;
  ::gnn::FusionProblem problem;
};
} // namespace

static BlockProblem describe(Block &block, ::gnn::FusionOptions options) {
  BlockProblem bp;
  // One cache for the block: the domains of all its values in linear time.
  DomainCache domains;
  bp.problem.options = options;
  DenseMap<Operation *, int> index;
  DenseMap<Value, int> graphs;
  for (Operation &op : block) {
    index[&op] = bp.ops.size();
    bp.ops.push_back(&op);
  }
  for (Operation *op : bp.ops) {
    ::gnn::FusionOp f;
    f.kind = kindOf(op);
    auto uses = [](Value v) {
      return static_cast<int>(std::distance(v.use_begin(), v.use_end()));
    };
    auto softmax = dyn_cast<EdgeSoftmaxOp>(op);
    for (Value result : op->getResults())
      (softmax && result == softmax.getLse() ? f.numSideUses : f.numUses) +=
          uses(result);
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    auto generic = dyn_cast<linalg::GenericOp>(op);
    auto spmm = dyn_cast<SpmmOp>(op);
    bool graphOp = ::gnn::isGraphOp(f.kind);
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (isa<mlir::gnn::GraphType>(value.getType())) {
        f.graph = graphs.try_emplace(value, graphs.size()).first->second;
        continue;
      }
      ::gnn::FusionOperand fo;
      Operation *def = value.getDefiningOp();
      if (def && def->getBlock() == &block) {
        fo.producer = index.lookup(def);
        auto producer = dyn_cast<EdgeSoftmaxOp>(def);
        fo.side = producer && value == producer.getLse();
      }
      fo.slot = FusionSlot::Other;
      if (graphOp)
        fo.slot = spmm && spmm.getWeights() &&
                          &operand == &spmm.getWeightsMutable()[0]
                      ? FusionSlot::Weights
                      : FusionSlot::Input;
      if (f.kind == FusionOpKind::Elementwise && linalgOp) {
        fo.slot = linalgOp.isDpsInput(&operand) ? FusionSlot::Input
                                                : FusionSlot::Init;
        if (generic && fo.slot == FusionSlot::Input) {
          fo.absorbable = isAbsorbableConsumer(generic, value);
          fo.chainable = isChainLink(generic, operand);
          fo.scaled = fo.absorbable && isScaledOperand(generic, operand);
        }
      }
      f.operands.push_back(fo);
    }
    if (f.kind == FusionOpKind::Elementwise && linalgOp)
      f.parallel = linalgOp.getNumParallelLoops() == linalgOp.getNumLoops();
    if (graphOp)
      f.edgeResult = isa<GatherOp, SddmmOp, EdgeSoftmaxOp>(op);
    else if (f.kind == FusionOpKind::Elementwise && op->getNumResults() == 1)
      f.edgeResult = domains.lookup(op->getResult(0)).domain == Domain::Edge;
    f.perEdge = f.edgeResult && generic && isEdgeLoopOp(generic);
    if (graphOp)
      f.rowElements = rowElementsOf(op->getResult(0));
    if (auto s = dyn_cast<SddmmOp>(op)) {
      f.reversed = s.getReversed();
      if (s.getKind() == SddmmKind::dot)
        f.dotElements = rowElementsOf(s.getLhs());
    }
    if (auto s = dyn_cast<EdgeSoftmaxOp>(op))
      f.reversed = s.getReversed();
    if (auto r = dyn_cast<ReduceOp>(op)) {
      f.reversed = r.getReversed();
      f.reduce = toPlanner(r.getKind());
      f.accumulates = r.getRelation();
    }
    if (auto d = dyn_cast<DegreeOp>(op))
      f.reversed = d.getReversed();
    if (spmm) {
      f.reversed = spmm.getReversed();
      f.reduce = toPlanner(spmm.getReduce());
      f.weighted = static_cast<bool>(spmm.getWeights());
    }
    bp.problem.ops.push_back(std::move(f));
  }
  return bp;
}

//===----------------------------------------------------------------------===//
// Applying the plan
//===----------------------------------------------------------------------===//

/// Makes the absorbed `consumer` write into `producer` (its init is never
/// read, so this changes nothing) and erases the `tensor.empty` and
/// `tensor.dim` ops that sized the old init if they become dead, recording
/// them in `erased`.
static void writeInto(linalg::GenericOp consumer, Value producer,
                      DenseSet<Operation *> &erased) {
  OpOperand *init = consumer.getDpsInitOperand(0);
  Operation *oldInit = init->get().getDefiningOp();
  init->set(producer);
  SmallVector<Operation *> worklist;
  if (oldInit)
    worklist.push_back(oldInit);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isa<tensor::EmptyOp, tensor::DimOp>(op) || !op->use_empty())
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

/// Wraps `members` (in program order, the last producing the result) into a
/// group placed at the last member, returning the last member's results and
/// then the `side` values (side results of other members); the `recomputed`
/// members are cloned into the group (their originals stay for other
/// readers), the others moved. Returns the group.
static KernelGroupOp wrap(ArrayRef<Operation *> members,
                          const DenseSet<Operation *> &recomputed,
                          ValueRange side, StringRef name,
                          GroupFamily family) {
  Operation *last = members.back();
  SmallVector<Value> results(last->getResults());
  llvm::append_range(results, side);
  OpBuilder b(last);
  auto group = KernelGroupOp::create(
      b, last->getLoc(), ValueRange(results).getTypes(), b.getStringAttr(name),
      GroupFamilyAttr::get(b.getContext(), family), ScheduleAttr());
  Block *body = new Block();
  group.getBody().push_back(body);
  b.setInsertionPointToEnd(body);
  auto yield = YieldOp::create(b, last->getLoc(), results);
  IRMapping clones;
  b.setInsertionPoint(yield);
  for (Operation *op : members) {
    if (recomputed.contains(op)) {
      b.clone(*op, clones);
      continue;
    }
    op->moveBefore(yield);
    for (OpOperand &operand : op->getOpOperands())
      if (Value clone = clones.lookupOrNull(operand.get()))
        operand.set(clone);
  }
  for (OpOperand &operand : yield->getOpOperands())
    if (Value clone = clones.lookupOrNull(operand.get()))
      operand.set(clone);
  for (auto [inner, outer] : llvm::zip(results, group.getResults()))
    inner.replaceUsesWithIf(outer, [&](OpOperand &use) {
      return !group->isAncestor(use.getOwner());
    });
  return group;
}

/// Applies one planned group: absorbed elementwise members write into the
/// member they read, size queries that become dead are erased, the
/// recomputed members are cloned into the group and the others (size queries
/// on intermediates included) move into it.
static void apply(const ::gnn::FusionGroup &planned, const BlockProblem &bp,
                  StringRef name, DenseSet<Operation *> &erased) {
  SmallVector<Operation *> members;
  DenseSet<Operation *> computing, recomputed;
  for (int m : planned.recomputed)
    recomputed.insert(bp.ops[m]);
  for (int m : planned.members) {
    members.push_back(bp.ops[m]);
    if (bp.problem.ops[m].kind != FusionOpKind::SizeQuery &&
        !recomputed.contains(bp.ops[m]))
      computing.insert(bp.ops[m]);
  }
  // Only ops that the group owns are rewritten in place.
  for (Operation *op : ArrayRef(members).drop_front()) {
    if (erased.contains(op) || recomputed.contains(op))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      continue;
    for (OpOperand *in : generic.getDpsInputOperands()) {
      Operation *def = in->get().getDefiningOp();
      if (def && computing.contains(def) &&
          isAbsorbableConsumer(generic, in->get())) {
        writeInto(generic, in->get(), erased);
        break;
      }
    }
  }
  for (int i = planned.members.size() - 1; i >= 0; --i) {
    Operation *op = members[i];
    if (bp.problem.ops[planned.members[i]].kind == FusionOpKind::SizeQuery &&
        !erased.contains(op) && !recomputed.contains(op) && op->use_empty()) {
      erased.insert(op);
      op->erase();
    }
  }
  SmallVector<Operation *> alive;
  for (Operation *op : members)
    if (!erased.contains(op))
      alive.push_back(op);
  SmallVector<Value> side;
  for (int m : planned.sideResults)
    side.push_back(cast<EdgeSoftmaxOp>(bp.ops[m]).getLse());
  wrap(alive, recomputed, side, name, kernelFamily(planned.family).family);
}

/// Erases the originals of the ops that groups recomputed, users first; each
/// is dead once every group reading it holds its own copy. Fails (with a
/// diagnostic) on one that is still read.
static LogicalResult eraseRecomputed(const BlockProblem &bp,
                                     const ::gnn::FusionPlan &plan,
                                     DenseSet<Operation *> &erased) {
  std::set<int> ops;
  for (const ::gnn::FusionGroup &group : plan.groups)
    ops.insert(group.recomputed.begin(), group.recomputed.end());
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation *op = bp.ops[*it];
    if (erased.contains(op))
      continue;
    if (!op->use_empty()) {
      // A size query may still size something outside every group.
      if (bp.problem.ops[*it].kind == FusionOpKind::SizeQuery)
        continue;
      return op->emitOpError("is recomputed by kernel groups but still "
                             "read outside them");
    }
    erased.insert(op);
    op->erase();
  }
  return success();
}

/// The graph statistics of the module around `op` (`gnn.graph_stats`), if
/// it has them.
static std::optional<::gnn::GraphStats> moduleStats(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto attr =
      module
          ? dyn_cast_or_null<GraphStatsAttr>(module->getAttr(kGraphStatsAttr))
          : GraphStatsAttr();
  if (!attr)
    return std::nullopt;
  return statsOf(attr);
}

/// The graph of an edge tensor, when a graph op produced it.
static Value edgeGraph(DomainCache &domains, Value value) {
  DomainSource source = domains.lookup(value);
  if (source.domain != Domain::Edge || !source.origin)
    return {};
  auto graphOp = dyn_cast<GraphOpInterface>(source.origin);
  return graphOp ? graphOp.getGraphOperand() : Value();
}

/// The linalg op whose init `dim` alone sizes (`tensor.dim` -> `tensor.empty`
/// [-> `linalg.fill`] -> init), in `dim`'s block; null otherwise.
static linalg::LinalgOp sizedInit(tensor::DimOp dim) {
  if (!dim->hasOneUse())
    return {};
  auto empty = dyn_cast<tensor::EmptyOp>(*dim->user_begin());
  if (!empty || !empty->hasOneUse())
    return {};
  Operation *user = *empty->user_begin();
  if (auto fill = dyn_cast<linalg::FillOp>(user))
    user = fill->hasOneUse() ? *fill->user_begin() : nullptr;
  auto op = dyn_cast_or_null<linalg::LinalgOp>(user);
  return op && op->getBlock() == dim->getBlock() ? op : linalg::LinalgOp();
}

/// An input of `op` that is an edge tensor of `graph` with a dynamic leading
/// size, defined before `dim` (or a block argument); null if none.
static Value edgeInputBefore(DomainCache &domains, linalg::LinalgOp op,
                             Value graph, tensor::DimOp dim) {
  for (OpOperand *operand : op.getDpsInputOperands()) {
    Value input = operand->get();
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type || type.getRank() == 0 || !type.isDynamicDim(0) ||
        edgeGraph(domains, input) != graph)
      continue;
    Operation *def = input.getDefiningOp();
    if (!def ||
        (def->getBlock() == dim->getBlock() && def->isBeforeInBlock(dim)))
      return input;
  }
  return {};
}

/// Reads the edge count that sizes a linalg op's init from one of its own
/// edge inputs: `tensor.dim %v, 0` of an edge tensor `%v` of graph G,
/// feeding (through `tensor.empty` and `linalg.fill`) the init of an op that
/// reads another edge tensor of G but not `%v`, is asked of that input
/// instead. Every edge tensor of G has G's edge count, so the value is the
/// same; the planner then need not write `%v` to memory for a group that
/// does not read it (the size query alone tied the group to it: the
/// backward of `sigmoid(k_i + q_j) * v_j` kept an `E x C` gather of `v`).
/// Refuses an op that reads tensors of two index sets along its leading
/// loop (a node and an edge tensor, or the two sides of a bipartite graph):
/// no graph sizes its rows, and a kernel over either count would read the
/// other tensor out of bounds. The graph ops' verifiers catch such a value
/// where a graph op reads it; this catches it where nothing does (a result
/// returned, or only structured ops after it).
static LogicalResult checkIndexSets(func::FuncOp func, DomainCache &domains) {
  WalkResult walk = func.walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      if (!isa<RankedTensorType>(result.getType()) ||
          domains.lookup(result).mixedAt != op)
        continue;
      InFlightDiagnostic diag =
          op->emitOpError()
          << "reads tensors of two index sets along its leading loop (node, "
             "edge, or the two sides of a bipartite graph), so no graph sizes "
             "its rows; bring them to one index set first (gnn.gather, "
             "gnn.reduce or gnn.spmm)";
      for (OpOperand &use : op->getOpOperands()) {
        if (!isa<RankedTensorType>(use.get().getType()))
          continue;
        Domain d = domains.lookup(use.get()).domain;
        if (d != Domain::Unknown)
          diag.attachNote(use.get().getLoc())
              << "operand " << use.getOperandNumber() << " is "
              << (d == Domain::Edge ? "an " : "a ") << stringifyDomain(d)
              << " tensor";
      }
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Records on `func` (kFixedCountsAttrName) the counts its static leading
/// dimensions fix: a node tensor of 7 rows holds only on graphs of 7 nodes.
/// The kernels are sized from the graph, so a Program checks each graph
/// against these (a tensor<5x8xf32> input gathered on a graph of 20 nodes
/// would be read out of bounds); two tensors fixing one count differently
/// are refused here.
static LogicalResult recordFixedCounts(func::FuncOp func,
                                       DomainCache &domains) {
  llvm::SmallVector<std::pair<Domain, std::pair<int64_t, Value>>> fixed;
  auto visit = [&](Value v) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getRank() < 1 || t.isDynamicDim(0))
      return success();
    Domain d = domains.lookup(v).domain;
    if (d == Domain::Unknown)
      return success();
    for (auto &[domain, known] : fixed)
      if (domain == d) {
        if (known.first == t.getDimSize(0))
          return success();
        InFlightDiagnostic diag =
            emitError(v.getLoc())
            << "a " << stringifyDomain(d) << " tensor of " << t.getDimSize(0)
            << " rows, where another one has " << known.first
            << ": no graph has both counts";
        diag.attachNote(known.second.getLoc()) << "the other tensor";
        return diag;
      }
    fixed.push_back({d, {t.getDimSize(0), v}});
    return success();
  };
  for (Value arg : func.getArguments())
    if (failed(visit(arg)))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (failed(visit(result)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (fixed.empty()) {
    func->removeAttr(kFixedCountsAttrName);
    return success();
  }
  Builder b(func.getContext());
  SmallVector<NamedAttribute> counts;
  for (auto &[domain, known] : fixed)
    counts.push_back(b.getNamedAttr(stringifyDomain(domain),
                                    b.getI64IntegerAttr(known.first)));
  func->setAttr(kFixedCountsAttrName, b.getDictionaryAttr(counts));
  return success();
}

static void readEdgeCountsFromInputs(func::FuncOp func) {
  SmallVector<std::pair<tensor::DimOp, Value>> rewrites;
  {
    // The cache needs the IR unchanged while it is in use.
    DomainCache domains;
    func.walk([&](tensor::DimOp dim) {
      std::optional<int64_t> index = getConstantIntValue(dim.getIndex());
      linalg::LinalgOp op = sizedInit(dim);
      if (!index || *index != 0 || !op)
        return;
      Value counted = dim.getSource();
      for (OpOperand *operand : op.getDpsInputOperands())
        if (operand->get() == counted)
          return;
      Value graph = edgeGraph(domains, counted);
      if (Value input = graph ? edgeInputBefore(domains, op, graph, dim) : Value())
        rewrites.push_back({dim, input});
    });
  }
  for (auto [dim, input] : rewrites)
    dim.getSourceMutable().assign(input);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct FormKernelGroups
    : public mlir::gnn::impl::GNNFormKernelGroupsBase<FormKernelGroups> {
  using GNNFormKernelGroupsBase::GNNFormKernelGroupsBase;

  /// The rules named by the `fuse` option (when it is empty, the default
  /// ones): the planner's in `options`, the families' whole-function rules
  /// (KernelFamily.h) in `whole`.
  LogicalResult parseRules(::gnn::FusionOptions &options,
                           SmallVectorImpl<const KernelFamily *> &whole) {
    SmallVector<const KernelFamily *> families;
    for (const KernelFamily &f : kernelFamilies())
      if (f.formWhole)
        families.push_back(&f);
    // The default: every whole-function rule, attention and aggregation
    // (the prologue is opt-in, see the option).
    options.attention = options.aggregation = fuse.empty();
    options.prologue = false;
    if (fuse.empty()) {
      whole.assign(families);
      return success();
    }
    for (const std::string &rule : fuse) {
      const KernelFamily *const *family =
          llvm::find_if(families, [&](const KernelFamily *f) {
            return f->wholeFunctionRule == rule;
          });
      if (family != families.end())
        whole.push_back(*family);
      else if (rule == "attention")
        options.attention = true;
      else if (rule == "aggregation")
        options.aggregation = true;
      else if (rule == "prologue")
        options.prologue = true;
      else if (rule != "none" || fuse.size() != 1) {
        InFlightDiagnostic d = getOperation().emitError()
                               << "expects fuse to be 'none' alone or a list "
                                  "of ";
        for (const KernelFamily *f : families)
          d << "'" << f->wholeFunctionRule << "', ";
        return d << "'attention' and 'aggregation' but got '"
                 << llvm::join(fuse, ",") << "' ('prologue' is a rule too)";
      }
    }
    return success();
  }

  void runOnOperation() override {
    ::gnn::FusionOptions options;
    SmallVector<const KernelFamily *> whole;
    if (failed(parseRules(options, whole)))
      return signalPassFailure();
    func::FuncOp func = getOperation();
    // A declaration has nothing to group.
    if (func.isExternal())
      return;
    // Both ask about the same values: one cache (the IR does not change
    // between them).
    DomainCache domains;
    if (failed(checkIndexSets(func, domains)) ||
        failed(recordFixedCounts(func, domains)))
      return signalPassFailure();
    readEdgeCountsFromInputs(func);
    // A family's whole-function rule (graph blocks: the whole function in
    // one block per small graph) when the statistics allow it.
    if (std::optional<::gnn::GraphStats> graph = moduleStats(func))
      for (const KernelFamily *family : whole)
        if (family->formWhole(func, *graph))
          return;
    // The body, then every other block with a graph op outside a group.
    llvm::SetVector<Block *> blocks;
    blocks.insert(&func.getBody().front());
    func.walk([&](Operation *op) {
      if (isa<GraphOpInterface>(op) && !op->getParentOfType<KernelGroupOp>())
        blocks.insert(op->getBlock());
    });
    SmallVector<BlockProblem> problems;
    SmallVector<::gnn::FusionPlan> plans;
    for (Block *block : blocks) {
      BlockProblem bp = describe(*block, options);
      // Within a block of SSA dominance every operand comes before its
      // reader; a graph region (a nested builtin.module) may not order them.
      if (std::string bad = bp.problem.check(); !bad.empty()) {
        block->getParentOp()->emitError()
            << "cannot plan the kernel groups of this block: " << bad;
        return signalPassFailure();
      }
      ::gnn::FusionPlan plan = ::gnn::planFusion(bp.problem);
      if (std::string bad = plan.verify(bp.problem); !bad.empty()) {
        func.emitError() << "got an invalid fusion plan: " << bad;
        return signalPassFailure();
      }
      problems.push_back(std::move(bp));
      plans.push_back(std::move(plan));
    }
    llvm::StringMap<int> counters;
    DenseSet<Operation *> erased;
    for (auto [i, bp] : llvm::enumerate(problems)) {
      for (const ::gnn::FusionGroup &group : plans[i].groups) {
        // Dense work in nested blocks stays as it is.
        if (i > 0 && group.family == FusionFamily::Elementwise)
          continue;
        StringRef kind =
            group.fused
                ? stringifyGroupFamily(kernelFamily(group.family).family)
                : kindName(bp.ops[group.anchor]);
        apply(group, bp, (kind + "_" + Twine(counters[kind]++)).str(), erased);
      }
      if (failed(eraseRecomputed(bp, plans[i], erased)))
        return signalPassFailure();
    }
    // The planner leaves extremum gradients alone (FusionOpKind::Other):
    // each is a group of its own, its kernel reading nothing fused.
    SmallVector<ExtremumGradOp> grads;
    func.walk([&](ExtremumGradOp op) {
      if (!op->getParentOfType<KernelGroupOp>())
        grads.push_back(op);
    });
    for (ExtremumGradOp op : grads) {
      StringRef kind = kindName(op);
      wrap({op.getOperation()}, {}, {},
           (kind + "_" + Twine(counters[kind]++)).str(),
           GroupFamily::extremum_grad);
    }
  }
};
} // namespace
