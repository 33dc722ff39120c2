//===- Passes.h - gnnk passes -------------------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_TRANSFORMS_PASSES_H
#define GNN_DIALECT_GNNKERNEL_TRANSFORMS_PASSES_H

#include "gnn/Dialect/GNN/Transforms/MaxChunks.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gnnk {

#define GEN_PASS_DECL
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h.inc"

/// The lowering patterns of each kernel-group family (one per thread mapping
/// the family implements; see gnn/Dialect/GNN/IR/KernelFamily.h), turning a
/// scheduled `gnn.kernel_group` into gnnk kernels and launches:
/// `populate<Family>LoweringPatterns`, one per line of GroupLowerings.def.
/// `gnn-lower-to-kernels` applies them group by group.
#define GNN_GROUP_LOWERING(Family)                                             \
  void populate##Family##LoweringPatterns(RewritePatternSet &patterns,         \
                                          int indexBits);
#include "gnn/Dialect/GNNKernel/Transforms/GroupLowerings.def"
/// All of the above.
void populateGroupLoweringPatterns(RewritePatternSet &patterns, int indexBits);

#define GEN_PASS_REGISTRATION
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h.inc"

} // namespace gnnk
} // namespace mlir

#endif // GNN_DIALECT_GNNKERNEL_TRANSFORMS_PASSES_H
