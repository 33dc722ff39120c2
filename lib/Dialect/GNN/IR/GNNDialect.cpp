//===- GNNDialect.cpp - gnn dialect ---------------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNN/IR/GNNInterfaces.h"
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

#define GET_ATTRDEF_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOpsAttrs.cpp.inc"

Type mlir::gnn::GraphType::parse(AsmParser &parser) {
  if (succeeded(parser.parseOptionalLess())) {
    parser.emitError(parser.getCurrentLocation(),
                     "expects !gnn.graph without parameters (its sizes are "
                     "known only at run time) but got '<'");
    return {};
  }
  return mlir::gnn::GraphType::get(parser.getContext());
}

void mlir::gnn::GraphType::print(AsmPrinter &) const {}

LogicalResult
ScheduleAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                     Mapping mapping, int64_t lanes, int64_t block,
                     int64_t vector, int64_t split) {
  if (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)))
    return emitError() << "expects lanes to be a power of two in [1, 32] but "
                          "got "
                       << lanes;
  if (block < 32 || block > 1024 || block % 32)
    return emitError() << "expects block to be a multiple of 32 in [32, 1024] "
                          "but got "
                       << block;
  if (vector != 1 && vector != 2 && vector != 4)
    return emitError() << "expects vector to be 1, 2 or 4 but got " << vector;
  if (split < 0 || (split > 0 && split < 32))
    return emitError() << "expects split to be 0 or at least 32 but got "
                       << split;
  return success();
}

void GNNDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnn/Dialect/GNN/IR/GNNOpsAttrs.cpp.inc"
      >();
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
  if (attr.getName() == kDifferentiableAttrName) {
    Region &region = op->getRegion(regionIndex);
    auto tensor =
        region.empty()
            ? RankedTensorType()
            : dyn_cast<RankedTensorType>(
                  region.front().getArgument(argIndex).getType());
    if (!isa<UnitAttr>(attr.getValue()) ||
        (!region.empty() &&
         (!tensor || !isa<FloatType>(tensor.getElementType()))))
      return op->emitError()
             << "expects `" << kDifferentiableAttrName
             << "` to be a unit attribute on a float tensor argument (argument #"
             << argIndex << ")";
    return success();
  }
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
