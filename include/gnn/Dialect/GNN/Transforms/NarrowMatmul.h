//===- NarrowMatmul.h - edge projections with a short contraction -*- C++ -*-===//
//
// Part of gnnc. Shared by gnn-autodiff (which makes such a product again in
// the backward instead of keeping it) and gnn-expand-narrow-matmuls (which
// turns it into the elementwise map the edge pass reading it computes).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_NARROWMATMUL_H
#define GNN_DIALECT_GNN_TRANSFORMS_NARROWMATMUL_H

#include "gnn/Dialect/GNN/IR/GNNDomain.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
namespace gnn {

/// The longest contraction of a narrow edge product: each element of the
/// map costs that many products, read from the edge's row and the weight.
constexpr int64_t kNarrowMatmulMaxK = 8;

/// Whether `mm` is a *narrow edge product*: `C += A B` or `C += A Bᵀ` (B a
/// weight `[n, k]` as PyTorch stores it) of f32 or f64 tensors whose rows
/// are edges, with a static contraction of at most kNarrowMatmulMaxK and a
/// static B. GINE's `lin(edge_attr)` (edge_dim 4): a GEMM would write
/// `[E, C]` values for the edge pass to read back; as a map of `k` products
/// per element the edge pass computes them where it reads them.
inline bool isNarrowEdgeMatmul(linalg::MatmulOp mm) {
  if (!mm.hasPureTensorSemantics() || mm->getNumResults() != 1)
    return false;
  auto a = dyn_cast<RankedTensorType>(mm.getInputs()[0].getType());
  auto b = dyn_cast<RankedTensorType>(mm.getInputs()[1].getType());
  auto c = dyn_cast<RankedTensorType>(mm.getResult(0).getType());
  if (!a || !b || !c || a.getRank() != 2 || b.getRank() != 2 ||
      c.getRank() != 2 || !b.hasStaticShape() || a.isDynamicDim(1) ||
      c.isDynamicDim(1))
    return false;
  Type element = a.getElementType();
  if (!(element.isF32() || element.isF64()) ||
      b.getElementType() != element || c.getElementType() != element)
    return false;
  int64_t k = a.getDimSize(1);
  if (k < 1 || k > kNarrowMatmulMaxK)
    return false;
  if (mm.hasUserDefinedMaps()) {
    MLIRContext *ctx = mm.getContext();
    AffineExpr i, j, kk;
    bindDims(ctx, i, j, kk);
    auto maps = mm.getIndexingMapsArray();
    if (maps.size() != 3 || maps[0] != AffineMap::get(3, 0, {i, kk}, ctx) ||
        maps[2] != AffineMap::get(3, 0, {i, j}, ctx) ||
        (maps[1] != AffineMap::get(3, 0, {kk, j}, ctx) &&
         maps[1] != AffineMap::get(3, 0, {j, kk}, ctx)))
      return false;
  }
  return inferDomain(mm.getResult(0)) == Domain::Edge ||
         inferDomain(mm.getInputs()[0]) == Domain::Edge;
}

/// Whether `mm`'s B is read transposed (`[n, k]`, `C += A Bᵀ`).
inline bool narrowMatmulTransposesB(linalg::MatmulOp mm) {
  if (!mm.hasUserDefinedMaps())
    return false;
  MLIRContext *ctx = mm.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  return mm.getIndexingMapsArray()[1] == AffineMap::get(3, 0, {j, k}, ctx);
}

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_NARROWMATMUL_H
