//===- GemmBias.h - biases GEMMs add, bias gradients they sum -----*- C++ -*-===//
//
// Part of gnnc. Shared by gnn-form-kernel-groups (which leaves such a
// broadcast, or such a column sum, outside the kernel groups),
// gnn-edge-sums-to-node-sums (which leaves the column sum as it is),
// gnn-expand-narrow-matmuls (the same matmul forms and bias broadcasts) and
// the CUDA Program lowering (which turns the broadcast into the GEMM's bias,
// a ReLU of its result into its epilogue's, and the column sum into the row
// split's row sums).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_GEMMBIAS_H
#define GNN_DIALECT_GNN_TRANSFORMS_GEMMBIAS_H

#include "gnn/Dialect/GNN/Transforms/Relu.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <algorithm>
#include <optional>

namespace mlir {
namespace gnn {

/// Whether `mm` is `C += A B` or `C += A Bᵀ` (B `[n, k]`, a Linear's weight
/// as PyTorch stores it): std::nullopt for other maps (a weight gradient's
/// Aᵀ B), else whether B is read transposed.
inline std::optional<bool> gemmTransposesB(linalg::MatmulOp mm) {
  if (!mm.hasUserDefinedMaps())
    return false;
  MLIRContext *ctx = mm.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  auto maps = mm.getIndexingMapsArray();
  if (maps.size() != 3 || maps[0] != AffineMap::get(3, 0, {i, k}, ctx) ||
      maps[2] != AffineMap::get(3, 0, {i, j}, ctx))
    return std::nullopt;
  if (maps[1] == AffineMap::get(3, 0, {k, j}, ctx))
    return false;
  if (maps[1] == AffineMap::get(3, 0, {j, k}, ctx))
    return true;
  return std::nullopt;
}

/// Whether `mm` is a GEMM the CUDA backend can add a bias to in its
/// epilogue (cuBLASLt): f32, C += A B or C += A Bᵀ (not a weight
/// gradient's Aᵀ B, which the row split computes).
inline bool takesGemmBias(linalg::MatmulOp mm) {
  return getElementTypeOrSelf(mm.getResult(0).getType()).isF32() &&
         gemmTransposesB(mm).has_value();
}

/// The vector `generic` broadcasts to every row, `out[i, j] = b[j]` (one
/// input, the body yielding its element as it is), or null.
inline Value broadcastVectorOf(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic->getNumResults() != 1 || !generic.hasPureTensorSemantics() ||
      generic.getNumLoops() != 2 || generic.getNumReductionLoops() != 0)
    return {};
  MLIRContext *ctx = generic.getContext();
  AffineExpr i, j;
  bindDims(ctx, i, j);
  auto in = dyn_cast<RankedTensorType>(generic.getDpsInputs()[0].getType());
  auto out = cast<RankedTensorType>(generic->getResult(0).getType());
  if (!in || in.getRank() != 1 || in.getElementType() != out.getElementType() ||
      generic.getIndexingMapsArray() !=
          SmallVector<AffineMap>{AffineMap::get(2, 0, {j}, ctx),
                                 AffineMap::get(2, 0, {i, j}, ctx)})
    return {};
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getValues()[0] != body.getArgument(0))
    return {};
  return generic.getDpsInputs()[0];
}

/// Whether `generic` is a vector broadcast to every row, `out[i, j] = b[j]`
/// (a layer's bias as the start of its sum of terms, `_ir.sage_layer`),
/// read only as the init of GEMMs that take a bias (`takesGemmBias`): the
/// CUDA backend adds `b` in each GEMM's epilogue instead of writing it to
/// every row in a kernel first, so the broadcast is never materialised and
/// stays outside the kernel groups.
inline bool isGemmBias(linalg::GenericOp generic) {
  if (!broadcastVectorOf(generic))
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

/// The GEMM whose ReLU `generic` is, where the CUDA backend runs that ReLU
/// in the GEMM's epilogue (cuBLASLt's RELU_BIAS: no kernel, no pass over
/// the pre-activation), or null: `generic` is torch.relu (isReluOfInput)
/// of an f32 GEMM's result through the identity map, that result's only
/// reader, and the GEMM adds a bias (its init an isGemmBias broadcast: an
/// MLP's Linear between GIN's or GINE's aggregation and the next Linear).
/// The pre-activation itself is then never written.
inline linalg::MatmulOp gemmReluOf(linalg::GenericOp generic) {
  if (!isReluOfInput(generic) ||
      !generic.getIndexingMapsArray()[0].isIdentity() ||
      !getElementTypeOrSelf(generic->getResult(0).getType()).isF32())
    return linalg::MatmulOp();
  auto mm = generic.getDpsInputs()[0].getDefiningOp<linalg::MatmulOp>();
  if (!mm || !mm->getResult(0).hasOneUse() || !takesGemmBias(mm))
    return linalg::MatmulOp();
  auto init = mm.getDpsInits()[0].getDefiningOp<linalg::GenericOp>();
  if (!init || !isGemmBias(init))
    return linalg::MatmulOp();
  return mm;
}

/// The ReLU `mm`'s epilogue applies (gemmReluOf: `mm`'s one reader), or
/// null: the GEMM then writes that ReLU's result.
inline linalg::GenericOp reluInEpilogueOf(linalg::MatmulOp mm) {
  if (!mm->getResult(0).hasOneUse())
    return linalg::GenericOp();
  auto g = dyn_cast<linalg::GenericOp>(*mm->getUsers().begin());
  return g && gemmReluOf(g) == mm ? g : linalg::GenericOp();
}

/// Whether `mm` is a GEMM the CUDA backend sums with its row split (a
/// weight gradient's Aᵀ B of f32 matrices, ProgramLowering) with static
/// columns on both sides, at least one each, and a result that is read.
inline bool takesGemmRowSums(linalg::MatmulOp mm) {
  if (!mm.hasUserDefinedMaps() || mm.getNumDpsInputs() != 2 ||
      mm->getResult(0).use_empty())
    return false;
  MLIRContext *ctx = mm.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  auto maps = mm.getIndexingMapsArray();
  if (maps.size() != 3 || maps[0] != AffineMap::get(3, 0, {k, i}, ctx) ||
      maps[1] != AffineMap::get(3, 0, {k, j}, ctx) ||
      maps[2] != AffineMap::get(3, 0, {i, j}, ctx))
    return false;
  auto a = dyn_cast<RankedTensorType>(mm.getDpsInputs()[0].getType());
  auto b = dyn_cast<RankedTensorType>(mm.getDpsInputs()[1].getType());
  auto c = dyn_cast<RankedTensorType>(mm->getResult(0).getType());
  return a && b && c && a.getRank() == 2 && b.getRank() == 2 &&
         a.getElementType().isF32() && b.getElementType().isF32() &&
         c.getElementType().isF32() && !ShapedType::isDynamic(a.getDimSize(1)) &&
         !ShapedType::isDynamic(b.getDimSize(1)) && a.getDimSize(1) >= 1 &&
         b.getDimSize(1) >= 1;
}

/// Whether `generic` is a sum over the rows of a 2-D f32 tensor A from
/// zero, `out[i] = Σ_r A[r, i]` (a bias gradient), structurally: one input
/// read at (r, i), an init of m elements filled with 0 at (i), the body
/// `out + in`.
inline bool isColumnSumFromZero(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic->getNumResults() != 1 || !generic.hasPureTensorSemantics() ||
      generic.getNumLoops() != 2 || generic.getNumReductionLoops() != 1 ||
      generic.hasIndexSemantics())
    return false;
  MLIRContext *ctx = generic.getContext();
  AffineExpr i, r;
  bindDims(ctx, i, r);
  auto in = dyn_cast<RankedTensorType>(generic.getDpsInputs()[0].getType());
  auto out = dyn_cast<RankedTensorType>(generic->getResult(0).getType());
  if (!in || !out || in.getRank() != 2 || out.getRank() != 1 ||
      !in.getElementType().isF32() || !out.getElementType().isF32() ||
      ShapedType::isDynamic(in.getDimSize(1)) ||
      out.getDimSize(0) != in.getDimSize(1) ||
      generic.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::reduction} ||
      generic.getIndexingMapsArray() !=
          SmallVector<AffineMap>{AffineMap::get(2, 0, {r, i}, ctx),
                                 AffineMap::get(2, 0, {i}, ctx)})
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (body.getOperations().size() != 2 || !add ||
      !((add.getLhs() == body.getArgument(1) &&
         add.getRhs() == body.getArgument(0)) ||
        (add.getLhs() == body.getArgument(0) &&
         add.getRhs() == body.getArgument(1))))
    return false;
  auto fill = generic.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  auto zero = fill ? fill.getInputs()[0].getDefiningOp<arith::ConstantOp>()
                   : arith::ConstantOp();
  auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
  return value && value.getValueAsDouble() == 0.0;
}

/// The GEMM whose row split also sums `generic`'s columns (its `rowSums`),
/// or null: `generic` is a column sum from zero (isColumnSumFromZero) of a
/// tensor A that is the left operand of a GEMM with row sums
/// (takesGemmRowSums) in the same block, the first such GEMM, and the
/// first such column sum of A; its result is read, only after that GEMM.
/// Then the CUDA backend computes the sum in the GEMM's kernels (no kernel
/// of its own, no second pass over A) and it stays outside the kernel
/// groups and out of gnn-edge-sums-to-node-sums.
inline linalg::MatmulOp gemmRowSumsOf(linalg::GenericOp generic) {
  if (!isColumnSumFromZero(generic) || generic->getResult(0).use_empty())
    return linalg::MatmulOp();
  Value a = generic.getDpsInputs()[0];
  Block *block = generic->getBlock();
  // A's readers in block order: the first GEMM with row sums, and whether
  // another column sum of A comes first.
  SmallVector<Operation *> readers;
  for (Operation *user : a.getUsers())
    if (user->getBlock() == block)
      readers.push_back(user);
  llvm::sort(readers, [](Operation *x, Operation *y) {
    return x->isBeforeInBlock(y);
  });
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  linalg::MatmulOp mm;
  for (Operation *user : readers) {
    auto m = dyn_cast<linalg::MatmulOp>(user);
    if (m && m.getDpsInputs()[0] == a && takesGemmRowSums(m)) {
      mm = m;
      break;
    }
  }
  if (!mm)
    return mm;
  for (Operation *user : readers) {
    if (user == generic.getOperation())
      break;
    auto other = dyn_cast<linalg::GenericOp>(user);
    if (other && isColumnSumFromZero(other) &&
        !other->getResult(0).use_empty())
      return linalg::MatmulOp();
  }
  // (A reader inside a kernel group: the group's place.)
  for (Operation *reader : generic->getResult(0).getUsers()) {
    Operation *at = block->findAncestorOpInBlock(*reader);
    if (!at || !mm->isBeforeInBlock(at))
      return linalg::MatmulOp();
  }
  return mm;
}

/// Whether `generic` is no kernel but part of a GEMM's step: a bias its
/// epilogue adds (isGemmBias), a ReLU its epilogue applies (gemmReluOf) or
/// a column sum its row split computes (gemmRowSumsOf). The group former,
/// the driver and the Program lowering each leave such a generic alone.
inline bool runsInAGemm(linalg::GenericOp generic) {
  return isGemmBias(generic) || gemmReluOf(generic) || gemmRowSumsOf(generic);
}

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_GEMMBIAS_H
