//===- GNNKernelAttrs.h - gnnk dialect attributes -----------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_IR_GNNKERNELATTRS_H
#define GNN_DIALECT_GNNKERNEL_IR_GNNKERNELATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace gnnk {

/// What a node of a #gnnk.formula is: a leaf (an integer, a name) or an
/// operator of two formulas.
enum class FormulaKind : uint32_t {
  Constant,
  Name,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  CeilDiv,
  Min,
  Max
};

/// Whether `name` is a name a formula may use: nodes, edges, graphs,
/// src_nodes, dst_nodes, max_in_degree, max_out_degree or largest_graph.
bool isFormulaName(llvm::StringRef name);

} // namespace gnnk
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "gnn/Dialect/GNNKernel/IR/GNNKernelAttrs.h.inc"

#endif // GNN_DIALECT_GNNKERNEL_IR_GNNKERNELATTRS_H
