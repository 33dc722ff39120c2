//===- GNNDialect.h - gnn dialect ---------------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Declares the `gnn` dialect, its `!gnn.graph` type and its enumerations.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNDIALECT_H
#define GNN_DIALECT_GNN_IR_GNNDIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "gnn/Dialect/GNN/IR/GNNOpsDialect.h.inc"

#include "gnn/Dialect/GNN/IR/GNNOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOpsAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOpsTypes.h.inc"

#endif // GNN_DIALECT_GNN_IR_GNNDIALECT_H
