//===- GNNDialect.cpp - gnn dialect ---------------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
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
