//===- InitGNN.h - dialects gnnc tools understand -----------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The one place that says which dialects the gnnc tools parse: the `gnn`
/// dialect plus the upstream dialects of the dense subset. Tools register
/// exactly these and nothing else.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_INITGNN_H
#define GNN_INITGNN_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace gnn {

/// Registers `gnn`, `func`, `tensor`, `linalg`, `arith` and `math`, and the
/// interface implementations they need.
void registerGNNDialects(mlir::DialectRegistry &registry);

} // namespace gnn

#endif // GNN_INITGNN_H
