//===- KernelSharing.h - finding identical gnnk kernels -----------*- C++ -*-===//
//
// Part of gnnc. What gnn-dedup-kernels and gnn-lower-to-kernels use to give
// identical kernels one gnnk.kernel (see GNNDedupKernels in Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_KERNELSHARING_H
#define GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_KERNELSHARING_H

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace gnnk {

/// The kernels seen so far, by a structural hash (attributes but the name,
/// body with values numbered in walk order, locations aside), each class
/// confirmed exactly (OperationEquivalence).
class KernelSharing {
public:
  /// A kernel seen before that `kernel` (launched by `launches`) is
  /// identical to, or `kernel` itself (then remembered). A kernel with
  /// gnnk.split matches only one whose launches have the same set of result
  /// types, rows and ties (what the heavy-row split reads from them).
  KernelOp share(KernelOp kernel, ArrayRef<LaunchOp> launches);

private:
  struct Candidate {
    KernelOp kernel;
    DictionaryAttr attrs;
    /// For a kernel to be split: its launches' distinct shapes.
    SmallVector<LaunchOp> shapes;
  };
  static bool sameKernel(Candidate &a, Candidate &b);
  llvm::DenseMap<llvm::hash_code, SmallVector<Candidate, 1>> kept;
};

/// The launches of every kernel of `module` by symbol name, in program
/// order, gathered in one walk that skips the kernels' bodies (a walk per
/// kernel made passes quadratic in the number of kernels).
llvm::DenseMap<StringAttr, SmallVector<LaunchOp>> launchesByKernel(ModuleOp module);

} // namespace gnnk
} // namespace mlir

#endif // GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_KERNELSHARING_H
