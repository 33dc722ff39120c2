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
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir {
namespace gnn {

/// What the leading dimension of a tensor is indexed by: the nodes of a
/// graph, its edges, or on a bipartite graph (`!gnn.graph<bipartite>`) its
/// source nodes or its destination nodes.
enum class Domain { Unknown, Node, Edge, Src, Dst };

/// The function argument attribute that declares the domain of a tensor
/// argument: `{gnn.domain = "edge"}`, `"node"`, `"src"` or `"dst"`.
constexpr llvm::StringLiteral kDomainAttrName = "gnn.domain";
/// On a function: the node or edge counts its static leading dimensions fix
/// (`{node = 7 : i64}`: a tensor<7x8xf32> node tensor), which a Program
/// built from it checks each graph against (gnn-form-kernel-groups sets it).
constexpr llvm::StringLiteral kFixedCountsAttrName = "gnn.fixed_counts";

/// Returns "node", "edge", "src", "dst" or "unknown".
llvm::StringRef stringifyDomain(Domain domain);

/// The domain a `gnn.domain` value names, if any.
std::optional<Domain> parseDomain(llvm::StringRef name);

/// Whether the domain is a set of nodes (Node, Src or Dst).
inline bool isNodeDomain(Domain d) {
  return d == Domain::Node || d == Domain::Src || d == Domain::Dst;
}

/// The node domain of the destinations (`destination`) or the sources of
/// the graph `graph` (a `!gnn.graph` value), turned around with `reversed`:
/// Node on a homogeneous graph, Dst or Src on a bipartite one.
Domain nodeSide(Value graph, bool destination, bool reversed);

/// Whether `graph`'s type is `!gnn.graph<bipartite>`.
bool isBipartite(Value graph);

/// The domain a graph op requires of its operand `use` (what its verifier
/// checks): node, edge, or on a bipartite graph the side the op reads it on;
/// none for the graph and for operands of other ops.
std::optional<Domain> operandDomain(OpOperand &use);

/// A value's domain and what it was read from.
struct DomainSource {
  Domain domain = Domain::Unknown;
  /// The graph op whose result fixes the domain, if any.
  Operation *origin = nullptr;
  /// Else the function argument that has it.
  Value argument;
  /// True when the argument has no `gnn.domain` and the domain is its
  /// default (node), not something the IR states.
  bool byDefault = false;
  /// When the domain is Unknown because the value mixes index sets: the op
  /// (e.g. a linalg.generic) whose leading loop reads both a node tensor and
  /// an edge tensor, which no binding can size.
  Operation *mixedAt = nullptr;
};

/// The domain of `value`, derived from its producers: graph ops have a fixed
/// result domain, `linalg` and reshaping ops keep the domain of their operands
/// when the leading dimension passes through (a stated domain wins over a
/// default one), and function arguments carry `gnn.domain`; a tensor argument
/// without it whose leading dimension is dynamic is a node tensor, as the
/// tools bind it. The domain is Unknown where the IR does not say, and where
/// a value is read from both node and edge tensors (see `mixedAt`). Linear in
/// the size of the IR above `value`: each value is looked at once.
DomainSource inferDomainSource(Value value);

/// The domain of `value` as the verifier of the graph op `user` sees it: as
/// inferDomainSource, except that a value which a graph op earlier in
/// program order requires to be a node (or edge) tensor has that domain,
/// since that op's verifier checks it. Verifying every graph op of a block then
/// stays linear where many of them read one long chain. Where the answer is
/// not what `user` expects, ask inferDomainSource for the diagnostic.
Domain inferDomainForVerifier(Value value, Operation *user);

/// inferDomainSource for many values, sharing what was learned on the way:
/// linear in the IR for all of them together. The IR must not change while
/// the cache is in use.
class DomainCache {
public:
  DomainSource lookup(Value value);

  /// Each value looked at, with whether its answer is final.
  using Memo = llvm::DenseMap<Value, std::pair<DomainSource, bool>>;

private:
  Memo memo;
};

/// The domain of `value` (see inferDomainSource). When the result is known
/// and `origin` is given, it is set to the op (or null for a block argument)
/// the answer was read from.
Domain inferDomain(Value value, Operation **origin = nullptr);

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_GNNDOMAIN_H
