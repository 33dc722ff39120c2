//===- GNNDialect.cpp - gnn dialect ---------------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gnn;

#include "gnn/Dialect/GNN/IR/GNNOpsDialect.cpp.inc"

#include "gnn/Dialect/GNN/IR/GNNOpsEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOpsTypes.cpp.inc"

void GNNDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "gnn/Dialect/GNN/IR/GNNOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "gnn/Dialect/GNN/IR/GNNOps.cpp.inc"
      >();
}

LogicalResult GNNDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() != kDomainAttrName)
    return op->emitError() << "unknown gnn argument attribute '"
                           << attr.getName().getValue() << "'";
  auto value = dyn_cast<StringAttr>(attr.getValue());
  if (!value || (value.getValue() != "node" && value.getValue() != "edge"))
    return op->emitError() << "expects `" << kDomainAttrName
                           << "` to be \"node\" or \"edge\" but got "
                           << attr.getValue();
  Region &region = op->getRegion(regionIndex);
  if (region.empty())
    return success();
  Type type = region.front().getArgument(argIndex).getType();
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < 1)
    return op->emitError() << "expects `" << kDomainAttrName
                           << "` on a ranked tensor of rank >= 1 but argument #"
                           << argIndex << " has type " << type;
  return success();
}
