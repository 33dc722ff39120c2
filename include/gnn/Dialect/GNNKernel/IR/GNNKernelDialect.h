//===- GNNKernelDialect.h - gnnk dialect --------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_IR_GNNKERNELDIALECT_H
#define GNN_DIALECT_GNNKERNEL_IR_GNNKERNELDIALECT_H

#include "mlir/IR/Dialect.h"

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOpsDialect.h.inc"

#endif // GNN_DIALECT_GNNKERNEL_IR_GNNKERNELDIALECT_H
