//===- GraphBlock.cpp - a whole function as one block per small graph ----===//
//
// Part of gnnc. See gnn/Dialect/GNN/IR/GraphBlock.h.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GraphBlock.h"
#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::gnn;

//===----------------------------------------------------------------------===//
// The ops graph blocks take
//===----------------------------------------------------------------------===//

/// A tensor whose rows are the graph's nodes: a dynamic leading dimension,
/// static trailing ones, f32, f64, bf16 or f16 (the block's shared arrays
/// hold the arithmetic type).
static bool isNodeTensor(Value v, DomainCache &domains) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() == 0 || !ShapedType::isDynamic(t.getDimSize(0)) ||
      llvm::any_of(t.getShape().drop_front(), ShapedType::isDynamic) ||
      !isGNNFloatType(t.getElementType()))
    return false;
  return domains.lookup(v).domain == Domain::Node;
}

/// A tensor of static shape that is an argument of the function (a weight,
/// a bias) or a constant fill.
static bool isDenseOperand(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape())
    return false;
  if (isa<BlockArgument>(v))
    return true;
  auto fill = v.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant());
}

/// Whether every result of `map` is a dimension or a constant and the first
/// is the node loop d0.
static bool readsNodeRow(AffineMap map) {
  if (map.getNumResults() == 0)
    return false;
  auto first = dyn_cast<AffineDimExpr>(map.getResult(0));
  return first && first.getPosition() == 0 &&
         llvm::all_of(map.getResults(), [](AffineExpr e) {
           return isa<AffineDimExpr, AffineConstantExpr>(e);
         });
}

static bool isDimsAndConstants(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    return isa<AffineDimExpr, AffineConstantExpr>(e);
  });
}

/// Why `op` cannot be part of a graph block (empty: it can).
static std::string refusal(Operation *op, DomainCache &domains) {
  if (isa<tensor::EmptyOp, arith::ConstantOp>(op))
    return "";
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    if (llvm::all_of(dim->getUsers(),
                     [](Operation *u) { return isa<tensor::EmptyOp>(u); }))
      return "";
    return "a tensor.dim read by more than tensor.empty";
  }
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics() &&
                   matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant())
               ? ""
               : "a fill of a non-constant";
  if (auto degree = dyn_cast<DegreeOp>(op))
    return isNodeTensor(degree.getResult(), domains)
               ? ""
               : "a degree of no node tensor";
  if (auto spmm = dyn_cast<SpmmOp>(op)) {
    if (spmm.getReduce() != ReduceKind::sum &&
        spmm.getReduce() != ReduceKind::mean)
      return "an spmm max or min";
    if (Value w = spmm.getWeights()) {
      auto wt = cast<RankedTensorType>(w.getType());
      auto xt = cast<RankedTensorType>(spmm.getInput().getType());
      if (!isa<BlockArgument>(w) || wt.getRank() > xt.getRank() ||
          llvm::any_of(wt.getShape().drop_front(), ShapedType::isDynamic))
        return "an spmm weighted by a computed edge tensor";
    }
    if (!isNodeTensor(spmm.getInput(), domains) ||
        !isNodeTensor(spmm.getResult(), domains))
      return "an spmm of no node tensors";
    return "";
  }
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
    if (!matmul.hasPureTensorSemantics() || matmul->getNumResults() != 1)
      return "a matmul on buffers";
    Value a = matmul.getDpsInputOperand(0)->get();
    Value b = matmul.getDpsInputOperand(1)->get();
    SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
    // Rows of the result are the rows of `a`: (d0, d1, d2) with d0 the node.
    if (!isNodeTensor(a, domains) || !readsNodeRow(maps[0]) ||
        !isDenseOperand(b) || !isDimsAndConstants(maps[1]) ||
        maps[2] != AffineMap::getMultiDimIdentityMap(3, op->getContext())
                       .getMajorSubMap(2) ||
        !isNodeTensor(matmul->getResult(0), domains))
      return "a matmul other than node rows times a weight argument";
    return "";
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    if (!generic.hasPureTensorSemantics() || generic.getNumDpsInits() != 1 ||
        generic->getNumResults() != 1 ||
        generic.getNumParallelLoops() != generic.getNumLoops())
      return "a linalg.generic with reductions or several results";
    if (!isNodeTensor(generic->getResult(0), domains) ||
        !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
             .isIdentity())
      return "a linalg.generic not writing a node tensor";
    for (OpOperand &operand : generic->getOpOperands()) {
      Value v = operand.get();
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      AffineMap map = generic.getMatchingIndexingMap(&operand);
      bool ok = isNodeTensor(v, domains)
                    ? readsNodeRow(map)
                    : isDenseOperand(v) && isDimsAndConstants(map);
      if (!ok)
        return "a linalg.generic reading an edge tensor, a computed dense "
               "tensor or another node's row";
    }
    return "";
  }
  return ("a " + op->getName().getStringRef() + " op").str();
}

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

bool mlir::gnn::isGraphBlockStep(Operation *op) {
  if (isa<linalg::MatmulOp, SpmmOp, DegreeOp>(op))
    return true;
  if (!isa<linalg::GenericOp>(op))
    return false;
  // Read many times per element: as a matmul's rows, an spmm's features.
  return llvm::any_of(op->getResult(0).getUses(), [](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto spmm = dyn_cast<SpmmOp>(user))
      return use.get() == spmm.getInput();
    if (auto matmul = dyn_cast<linalg::MatmulOp>(user))
      return matmul.isDpsInput(&use);
    return false;
  });
}

static int64_t rowElements(Value v) {
  int64_t row = 1;
  for (int64_t d : cast<RankedTensorType>(v.getType()).getShape().drop_front())
    row *= d;
  return row;
}

int64_t GraphBlockPlan::sharedBytes() const {
  int64_t bytes = 0;
  for (int64_t rows : arrayRows)
    bytes += rows * capacity * elementBytes;
  return bytes;
}

FailureOr<GraphBlockPlan> GraphBlockPlan::of(Block &body, ValueRange results,
                                             int64_t capacity,
                                             std::string &why) {
  GraphBlockPlan plan;
  plan.capacity = capacity;
  DenseMap<Operation *, int> stepIndex;
  for (Operation &op : body.without_terminator()) {
    for (Type t : op.getResultTypes())
      if (auto tensor = dyn_cast<RankedTensorType>(t);
          tensor && isa<Float64Type>(tensor.getElementType()))
        plan.elementBytes = 8;
    if (!isGraphBlockStep(&op))
      continue;
    stepIndex[&op] = plan.steps.size();
    plan.steps.push_back(&op);
  }
  // The last step reading each step's result, through the elementwise ops
  // evaluated where they are read; the stores of the results that are no
  // steps read last (index steps.size()).
  DenseMap<Operation *, int> lastRead;
  llvm::DenseSet<std::pair<Value, int>> seen;
  std::function<void(Value, int)> reads = [&](Value v, int reader) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &body || !seen.insert({v, reader}).second)
      return;
    if (stepIndex.contains(def)) {
      int &last = lastRead[def];
      last = std::max(last, reader);
      return;
    }
    if (isa<linalg::GenericOp>(def))
      for (Value operand : def->getOperands())
        reads(operand, reader);
  };
  for (auto [s, op] : llvm::enumerate(plan.steps))
    for (Value operand : op->getOperands())
      reads(operand, s);
  for (Value r : results) {
    Operation *def = r.getDefiningOp();
    if (!def || def->getBlock() != &body) {
      why = "a result not computed by the body";
      return failure();
    }
    if (!stepIndex.contains(def))
      reads(r, plan.steps.size());
  }
  // Arrays by first fit among the free ones of the same row width; an
  // array is free once the last step reading its value has passed.
  SmallVector<int> holder; // the step whose value each array holds
  for (auto [s, op] : llvm::enumerate(plan.steps)) {
    auto read = lastRead.find(op);
    if (read == lastRead.end()) {
      plan.stepArray.push_back(-1);
      continue;
    }
    int64_t rows = rowElements(op->getResult(0));
    int chosen = -1;
    for (auto [a, h] : llvm::enumerate(holder))
      if (plan.arrayRows[a] == rows && lastRead[plan.steps[h]] < (int)s) {
        chosen = a;
        break;
      }
    if (chosen < 0) {
      chosen = holder.size();
      holder.push_back(0);
      plan.arrayRows.push_back(rows);
    }
    holder[chosen] = s;
    plan.stepArray.push_back(chosen);
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Forming the group
//===----------------------------------------------------------------------===//

bool mlir::gnn::acceptsGraphBlock(ArrayRef<StringRef> ops) {
  return !ops.empty() && llvm::all_of(ops, [](StringRef name) {
    return name == "degree" || name == "spmm";
  });
}

FailureOr<ScheduleAttr> mlir::gnn::scheduleGraphBlock(KernelGroupOp group,
                                                      const ScheduleInputs &) {
  // A molecule (9 to 30 nodes of 64 features) is a few hundred to two
  // thousand elements per step: 128 threads keep every lane busy in the
  // steps and let 16 blocks share an SM. (lanes and vector are not read.)
  return ScheduleAttr::get(group.getContext(), Mapping::block_per_graph,
                           /*lanes=*/32, /*block=*/128, /*vector=*/1,
                           /*split=*/0);
}

bool mlir::gnn::formGraphBlock(func::FuncOp func,
                               const ::gnn::GraphStats &graph) {
  int64_t capacity = graph.smallGraphClass();
  if (capacity <= 0 || !func.getBody().hasOneBlock())
    return false;
  Block &body = func.getBody().front();
  DomainCache domains;
  bool graphOps = false;
  for (Operation &op : body.without_terminator()) {
    if (!refusal(&op, domains).empty())
      return false;
    graphOps |= isa<GraphOpInterface>(op);
  }
  if (!graphOps)
    return false;
  Operation *terminator = body.getTerminator();
  SmallVector<Value> results;
  for (Value v : terminator->getOperands()) {
    if (isa<BlockArgument>(v) || llvm::is_contained(results, v))
      continue;
    Operation *def = v.getDefiningOp();
    if (!isNodeTensor(v, domains) || isa<linalg::FillOp>(def))
      return false;
    results.push_back(v);
  }
  if (results.empty())
    return false;
  std::string why;
  FailureOr<GraphBlockPlan> plan =
      GraphBlockPlan::of(body, results, capacity, why);
  if (failed(plan) || plan->sharedBytes() > ::gnn::kBlockSharedBytes)
    return false;
  // A single step is one kernel either way, and the per-op mappings are
  // tuned for it (a lone spmm runs faster row-parallel than a block per
  // molecule): a graph block pays off by saving launches.
  if (plan->steps.size() < 2)
    return false;

  OpBuilder b(terminator);
  auto group = KernelGroupOp::create(
      b, func.getLoc(), ValueRange(results).getTypes(),
      b.getStringAttr("graph_block_0"),
      GroupFamilyAttr::get(b.getContext(), GroupFamily::graph_block),
      ScheduleAttr());
  group->setAttr(kGraphNodesAttrName, b.getI64IntegerAttr(capacity));
  Block *inner = new Block();
  group.getBody().push_back(inner);
  b.setInsertionPointToEnd(inner);
  auto yield = YieldOp::create(b, func.getLoc(), results);
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    if (&op != group.getOperation())
      ops.push_back(&op);
  for (Operation *op : ops)
    op->moveBefore(yield);
  for (auto [inside, outside] : llvm::zip(results, group.getResults()))
    inside.replaceUsesWithIf(
        outside, [&](OpOperand &use) { return use.getOwner() == terminator; });
  return true;
}
