//===- GNNDomain.h - node and edge tensors ------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Tells whether a tensor value is indexed by node or by edge, as far as the
/// IR shows it. The verifiers use it to reject an edge tensor where a node
/// tensor is expected (and vice versa); tools use it to size function inputs.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNDOMAIN_H
#define GNN_DIALECT_GNN_IR_GNNDOMAIN_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace gnn {

/// What the leading dimension of a tensor is indexed by.
enum class Domain { Unknown, Node, Edge };

/// The function argument attribute that declares the domain of a tensor
/// argument: `{gnn.domain = "edge"}` or `{gnn.domain = "node"}`.
constexpr llvm::StringLiteral kDomainAttrName = "gnn.domain";

/// Returns "node", "edge" or "unknown".
llvm::StringRef stringifyDomain(Domain domain);

/// The domain of `value`, derived from its producer: graph ops have a fixed
/// result domain, `linalg` and reshaping ops keep the domain of their operands
/// when the leading dimension passes through, and function arguments carry
/// `gnn.domain`. Returns Unknown where the IR does not say. When the result
/// is known and `origin` is given, it is set to the op (or null for a block
/// argument) the answer was read from.
Domain inferDomain(Value value, Operation **origin = nullptr);

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_GNNDOMAIN_H
