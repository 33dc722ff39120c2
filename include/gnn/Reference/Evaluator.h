//===- Evaluator.h - the reference semantics of gnn IR ------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The CPU reference evaluator: runs a `func.func` of graph-level `gnn` ops and
/// the dense subset (`linalg`, `tensor`, `arith`, `math`) in double precision
/// on a host graph. It *defines* what every op means; every backend is tested
/// against it. `docs/Semantics.md` states the same rules in prose.
///
/// Errors (unsupported ops, shape mismatches between the IR and the graph or
/// the inputs) are emitted as MLIR diagnostics at the offending op and the
/// call returns failure.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_REFERENCE_EVALUATOR_H
#define GNN_REFERENCE_EVALUATOR_H

#include "gnn/Graph/HostGraph.h"
#include "gnn/Tensor/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <vector>

namespace gnn {

/// What a function argument is, as the evaluator sizes it.
struct ArgumentSpec {
  /// True for the `!gnn.graph` argument.
  bool isGraph = false;
  /// Concrete shape for this graph (dynamic leading dimensions resolved to
  /// the node or edge count).
  std::vector<int64_t> shape;
  /// "node", "edge", "src", "dst" (a bipartite graph's sides) or "dense"
  /// (a weight: no dynamic leading dimension).
  std::string role;
  /// The element type: "f32", "f64", "bf16" or "f16".
  std::string element = "f32";
};

/// The message for input `index` (of `spec`) given with another `shape`
/// than the function's on `graphName`: "argument #i (role) expects shape
/// [..] on graph 'g' but the input has shape [..]" (the evaluator's and
/// gnn-run's --inputs check).
std::string wrongInputShape(size_t index, const ArgumentSpec &spec,
                            llvm::StringRef graphName,
                            llvm::ArrayRef<int64_t> shape);

/// Resolves every argument of `func` against `graph`: exactly one
/// `!gnn.graph`, the rest ranked float tensors whose only dynamic dimension
/// may be the leading one (nodes, or edges with `{gnn.domain = "edge"}`).
mlir::FailureOr<std::vector<ArgumentSpec>>
resolveArguments(mlir::func::FuncOp func, const HostGraph &graph);

/// Checks that the tensors of `func` on `graph` fit in this machine's host
/// memory, one double per element: its arguments only, or what the
/// reference holds at its peak (the arguments, which the caller keeps, plus
/// the values live after each op in program order: the reference frees a
/// value after its last use). A dynamic leading dimension counts nodes or
/// edges by the value's domain (the larger where it is unknown). Emits an
/// error naming the bytes and pointing at the largest tensor.
mlir::LogicalResult checkHostMemory(mlir::func::FuncOp func,
                                    const HostGraph &graph,
                                    bool argumentsOnly);

/// Seeded inputs for every non-graph argument, in order: uniform values in
/// [-s, s) rounded to float32 (to bf16 or f16 for arguments of those
/// types, so that every backend reads the same stored values), with s = 1
/// for node and edge tensors and s = 1/sqrt(rows) for dense weights (rows =
/// their leading size). The same seed gives the same values on every
/// machine.
std::vector<Tensor> makeSeededInputs(llvm::ArrayRef<ArgumentSpec> args,
                                     uint64_t seed);

/// How the evaluator keeps the results of ops.
enum class Storage {
  /// In double, whatever the element type (the reference: docs/Semantics.md).
  Double,
  /// At their element type (f32 results rounded to float32, bf16 and f16
  /// ones to nearest even of those types, from the double): for a caller
  /// that keeps tensors at their element type between functions (the
  /// PyTorch ops), so that what a backward reads back of its forward (the
  /// residuals) is what the forward went on with, and what it returns is
  /// what a tensor of that type holds.
  ElementType,
};

/// Runs `func` on `graph` with `inputs` (one per non-graph argument, shapes
/// as resolveArguments gives them; taken over: a caller that keeps its
/// inputs passes a copy) and returns its results. Refuses (see
/// checkHostMemory) what does not fit in host memory.
mlir::FailureOr<std::vector<Tensor>>
evaluateReference(mlir::func::FuncOp func, const HostGraph &graph,
                  std::vector<Tensor> inputs,
                  Storage storage = Storage::Double);

} // namespace gnn

#endif // GNN_REFERENCE_EVALUATOR_H
