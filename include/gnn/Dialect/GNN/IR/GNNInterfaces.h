//===- GNNInterfaces.h - gnn dialect interfaces -------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The op interfaces of the `gnn` dialect: VJPOpInterface, the reverse-mode
/// derivative rule of an op, and GraphOpInterface, the mark of an op over a
/// graph's edges (see GNNInterfaces.td).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNINTERFACES_H
#define GNN_DIALECT_GNN_IR_GNNINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "gnn/Dialect/GNN/IR/GNNInterfaces.h.inc"

namespace mlir {
namespace gnn {
/// The unit argument attribute marking the float tensor arguments whose
/// gradients `gnn-autodiff` computes.
constexpr llvm::StringLiteral kDifferentiableAttrName = "gnn.differentiable";
} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_GNNINTERFACES_H
