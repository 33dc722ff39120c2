//===- GNNOps.h - gnn dialect operations --------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Declares the graph-level operations of the `gnn` dialect.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNOPS_H
#define GNN_DIALECT_GNN_IR_GNNOPS_H

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNN/IR/GNNInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOps.h.inc"

#endif // GNN_DIALECT_GNN_IR_GNNOPS_H
