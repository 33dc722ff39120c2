//===- GNNKernelDialect.cpp - gnnk dialect --------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNNKernel/IR/GNNKernelDialect.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gnnk;

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOpsDialect.cpp.inc"

void GNNKDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.cpp.inc"
      >();
}
