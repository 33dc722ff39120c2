//===- GNNDomain.cpp - node and edge tensors ------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/IndexingMapOpInterface.h"

using namespace mlir;
using namespace mlir::gnn;

llvm::StringRef mlir::gnn::stringifyDomain(Domain domain) {
  switch (domain) {
  case Domain::Node:
    return "node";
  case Domain::Edge:
    return "edge";
  case Domain::Unknown:
    return "unknown";
  }
  return "unknown";
}

/// Walks producers up to this many steps; long elementwise chains beyond that
/// are left Unknown rather than costing the verifier quadratic time.
static constexpr int kMaxDepth = 32;

static Domain inferImpl(Value value, Operation **origin, int depth);

/// The domain of a block argument: a function argument's `gnn.domain`.
static Domain inferArgument(BlockArgument arg, Operation **origin) {
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.getFunctionBody().front())
    return Domain::Unknown;
  auto attr = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kDomainAttrName);
  if (!attr)
    return Domain::Unknown;
  if (origin)
    *origin = nullptr;
  if (attr.getValue() == "edge")
    return Domain::Edge;
  if (attr.getValue() == "node")
    return Domain::Node;
  return Domain::Unknown;
}

/// For a structured op (linalg) result: the result row `i` is the iteration
/// point `d` mapped to it; any operand whose leading index is the same loop
/// dimension has the same domain.
static Domain inferStructured(Operation *op, OpResult result, Operation **origin,
                              int depth) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  auto indexed = dyn_cast<IndexingMapOpInterface>(op);
  if (!dps || !indexed)
    return Domain::Unknown;
  OpOperand *init = dps.getTiedOpOperand(result);
  if (!init)
    return Domain::Unknown;
  AffineMap initMap = indexed.getMatchingIndexingMap(init);
  if (initMap.getNumResults() == 0)
    return Domain::Unknown;
  AffineExpr lead = initMap.getResult(0);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = indexed.getMatchingIndexingMap(&operand);
    if (map.getNumResults() == 0 || map.getResult(0) != lead)
      continue;
    Domain d = inferImpl(operand.get(), origin, depth + 1);
    if (d != Domain::Unknown)
      return d;
  }
  return Domain::Unknown;
}

/// A reshape keeps the domain when its first reassociation group is the
/// leading dimension alone.
template <typename ReshapeOp>
static Domain inferReshape(ReshapeOp op, Operation **origin, int depth) {
  auto groups = op.getReassociationIndices();
  if (groups.empty() || groups.front().size() != 1)
    return Domain::Unknown;
  return inferImpl(op.getSrc(), origin, depth + 1);
}

static Domain inferImpl(Value value, Operation **origin, int depth) {
  if (depth > kMaxDepth || !isa<RankedTensorType>(value.getType()))
    return Domain::Unknown;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return inferArgument(arg, origin);
  Operation *op = value.getDefiningOp();
  Domain fixed = Domain::Unknown;
  if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op))
    fixed = value == softmax.getLse() ? Domain::Node : Domain::Edge;
  else if (isa<GatherOp, SddmmOp>(op))
    fixed = Domain::Edge;
  else if (isa<SpmmOp, ReduceOp, DegreeOp>(op))
    fixed = Domain::Node;
  if (fixed != Domain::Unknown) {
    if (origin)
      *origin = op;
    return fixed;
  }
  // A kernel group's result is what its body yields.
  if (auto group = dyn_cast<KernelGroupOp>(op))
    return inferImpl(group.getYield().getValues()[cast<OpResult>(value).getResultNumber()],
                     origin, depth + 1);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return inferReshape(expand, origin, depth);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return inferReshape(collapse, origin, depth);
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return inferImpl(cast.getSource(), origin, depth + 1);
  return inferStructured(op, cast<OpResult>(value), origin, depth);
}

Domain mlir::gnn::inferDomain(Value value, Operation **origin) {
  return inferImpl(value, origin, 0);
}
