//===- GNNKernelOps.h - gnnk dialect operations -------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_IR_GNNKERNELOPS_H
#define GNN_DIALECT_GNNKERNEL_IR_GNNKERNELOPS_H

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelAttrs.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h.inc"

namespace mlir {
namespace gnnk {

/// The symbols of launch-shape affine maps: s0 = nodes, s1 = edges,
/// s2 = graphs, s3 = a bipartite graph's source nodes, s4 its destination
/// nodes (both the nodes on a graph of one node set).
constexpr unsigned kNumSizeSymbols = 5;
constexpr unsigned kSrcNodesSymbol = 3, kDstNodesSymbol = 4;

/// The name of size symbol `i` ("nodes", "edges", "graphs", "src_nodes",
/// "dst_nodes").
llvm::StringRef sizeSymbolName(unsigned i);
/// Whether `name` names a size parameter: a size symbol's name.
bool isSizeName(llvm::StringRef name);

/// The prefix of the names the runtime and the emitted CUDA prelude define
/// themselves (the boundary kernels gnn_edges_to_slots* and
/// gnn_slots_to_edges*, the device header's gnn_* helpers and types): no
/// kernel of a module may start with it.
constexpr llvm::StringLiteral kReservedKernelPrefix = "gnn_";

/// Why the C identifier `name` cannot name a kernel in the emitted CUDA C++,
/// or an empty string if it can (lib/Dialect/GNNKernel/IR/
/// ReservedKernelNames.cpp): a C, C++ or CUDA keyword, a name reserved to
/// the implementation (starting with "__" or '_' and a capital letter),
/// `main`, what NVRTC declares without an #include (CUDA built-in
/// variables; the CUDA math API, single and double precision; CUDA's
/// integer, atomic, texture and surface functions; vector types and their
/// make_ functions; names of the CUDA runtime API and its CUDART macros;
/// printf, malloc, free, memcpy, memset, assert, clock; std, size_t, NULL),
/// the index type the prelude defines (`idx_t`), or the runtime's prefix
/// (kReservedKernelPrefix). Says which of these it is.
std::string reservedKernelName(llvm::StringRef name);

/// The rows a traversal of `graph` (a `!gnn.graph` value) runs over: its
/// destinations, its sources when `reversed`. On a graph of one node set
/// both are the nodes (symbol 0, "nodes"); on a bipartite graph the side's
/// symbol and size name.
struct RowSpace {
  unsigned symbol;
  llvm::StringRef name;
  AffineExpr expr(MLIRContext *ctx) const {
    return getAffineSymbolExpr(symbol, ctx);
  }
};
RowSpace traversalRows(Value graph, bool reversed);
/// The rows of the sources (`destination` false) or destinations of a
/// traversal of `graph`, turned around with `reversed`.
RowSpace sideRows(Value graph, bool destination, bool reversed);

/// The number of rows of a tensor (its leading dimension) as an affine
/// expression of the size symbols: a constant, nodes or edges from the
/// value's domain, a launch's row count, or through fills, reshapes and
/// linalg ops from their operands. Failure when it cannot be told.
FailureOr<AffineExpr> rowsOf(Value value);

/// Elements per row of a tensor (the product of its static trailing
/// dimensions); emits a diagnostic at `where` for other tensors.
FailureOr<int64_t> rowElementsOf(Value value, Operation *where);

/// The lanes of the team mapping enclosing `op` (gnnk.for_rows or
/// gnnk.for_blocks), or 0 if there is none.
int64_t enclosingTeamLanes(Operation *op);

/// A discardable attribute of an `scf.for` inside a kernel (an integer in
/// [1, 16]): the printer unrolls the loop by that factor, e.g. so that the
/// independent loads of several iterations are in flight together; 1 keeps
/// a loop with constant bounds rolled (the printer fully unrolls those of at
/// most 32 trips otherwise).
constexpr llvm::StringLiteral kUnrollAttrName = "gnnk.unroll";

/// A discardable attribute of a `gnnk.kernel` (an integer): the most nodes
/// per graph the kernel holds (a block-per-graph kernel keeps a graph's
/// values in shared memory); the Program refuses graphs with larger ones.
constexpr llvm::StringLiteral kMaxGraphNodesAttrName = "gnnk.max_graph_nodes";

/// A discardable attribute of a `gnnk.kernel` (an integer): the relation
/// count of the `relation` gathers and reduces it runs (rows node * R +
/// type(e), the graph's `csr_type`); the Program refuses graphs without edge
/// types or with a relation id at or past the smallest such count.
constexpr llvm::StringLiteral kRelationsAttrName = "gnnk.relations";

/// Records on `kernel` that it indexes rows by `relations` relations (the
/// smallest count it sees is kept).
void noteRelations(Operation *kernel, int64_t relations);

} // namespace gnnk
} // namespace mlir

#endif // GNN_DIALECT_GNNKERNEL_IR_GNNKERNELOPS_H
