//===- GemmBias.h - a bias a GEMM adds in its epilogue -----------*- C++ -*-===//
//
// Part of gnnc. Shared by gnn-form-kernel-groups (which leaves such a
// broadcast outside the kernel groups) and the CUDA Program lowering (which
// turns it into the GEMM's bias).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_GEMMBIAS_H
#define GNN_DIALECT_GNN_TRANSFORMS_GEMMBIAS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
namespace gnn {

/// Whether `mm` is a GEMM the CUDA backend can add a bias to in its
/// epilogue (cuBLASLt): f32, C += A B or C += A Bᵀ (not a weight
/// gradient's Aᵀ B, which the row split computes).
inline bool takesGemmBias(linalg::MatmulOp mm) {
  if (!getElementTypeOrSelf(mm.getResult(0).getType()).isF32())
    return false;
  if (!mm.hasUserDefinedMaps())
    return true;
  MLIRContext *ctx = mm.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  auto maps = mm.getIndexingMapsArray();
  return maps.size() == 3 && maps[0] == AffineMap::get(3, 0, {i, k}, ctx) &&
         (maps[1] == AffineMap::get(3, 0, {k, j}, ctx) ||
          maps[1] == AffineMap::get(3, 0, {j, k}, ctx)) &&
         maps[2] == AffineMap::get(3, 0, {i, j}, ctx);
}

/// Whether `generic` is a vector broadcast to every row, `out[i, j] = b[j]`
/// (a layer's bias as the start of its sum of terms, `_ir.sage_layer`),
/// read only as the init of GEMMs that take a bias (`takesGemmBias`): the
/// CUDA backend adds `b` in each GEMM's epilogue instead of writing it to
/// every row in a kernel first, so the broadcast is never materialised and
/// stays outside the kernel groups.
inline bool isGemmBias(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic->getNumResults() != 1 || !generic.hasPureTensorSemantics() ||
      generic.getNumLoops() != 2 || generic.getNumReductionLoops() != 0)
    return false;
  MLIRContext *ctx = generic.getContext();
  AffineExpr i, j;
  bindDims(ctx, i, j);
  auto in = dyn_cast<RankedTensorType>(generic.getDpsInputs()[0].getType());
  auto out = cast<RankedTensorType>(generic->getResult(0).getType());
  if (!in || in.getRank() != 1 || in.getElementType() != out.getElementType() ||
      generic.getIndexingMapsArray() !=
          SmallVector<AffineMap>{AffineMap::get(2, 0, {j}, ctx),
                                 AffineMap::get(2, 0, {i, j}, ctx)})
    return false;
  // The body yields the vector's element as it is.
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getValues()[0] != body.getArgument(0))
    return false;
  Value result = generic->getResult(0);
  if (result.use_empty())
    return false;
  for (OpOperand &use : result.getUses()) {
    auto mm = dyn_cast<linalg::MatmulOp>(use.getOwner());
    if (!mm || !mm.isDpsInit(&use) || !takesGemmBias(mm))
      return false;
  }
  return true;
}

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_GEMMBIAS_H
