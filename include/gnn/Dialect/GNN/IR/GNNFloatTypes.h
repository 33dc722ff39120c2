//===- GNNFloatTypes.h - storage and arithmetic float types -----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The float element types of `gnn` tensors and the type their values are
/// computed in. f32 and f64 tensors are computed in their own type; bf16 and
/// f16 are storage types: kernels widen them to f32 on load, compute and
/// accumulate in f32, and round to the storage type on store. State that
/// must not lose precision between kernels (an edge softmax's log-sum-exp,
/// an extremum's winner codes) is of the arithmetic type.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNFLOATTYPES_H
#define GNN_DIALECT_GNN_IR_GNNFLOATTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace gnn {

/// A unit attribute on a `linalg.generic` of a bf16 or f16 result whose body
/// computes in f32 and converts what it yields with `arith.truncf`: the
/// result is rounded to its storage type only where it is stored, and a
/// kernel that consumes it in registers reads the f32 value. gnn-autodiff
/// puts it on the backward's arithmetic (gradient terms that cancel when
/// summed must not be rounded one by one); never on a value compared for
/// equality with a stored one (a max's recomputed edge values).
constexpr llvm::StringLiteral kRoundsOnStoreAttrName = "gnn.rounds_on_store";

/// Whether `type` is a storage-only float type (bf16 or f16): computed in
/// f32.
inline bool isStorageFloatType(Type type) {
  return type.isBF16() || type.isF16();
}

/// Whether `type` is a float element type of gnn tensors: f16, bf16, f32 or
/// f64.
inline bool isGNNFloatType(Type type) {
  return isStorageFloatType(type) || type.isF32() || type.isF64();
}

/// The type values of element type `type` are computed in: f32 for bf16 and
/// f16, `type` itself otherwise.
inline Type arithmeticType(Type type) {
  return isStorageFloatType(type) ? Float32Type::get(type.getContext()) : type;
}

/// `type` (a ranked tensor) with its element type replaced by the
/// arithmetic type of it.
inline RankedTensorType withArithmeticElements(RankedTensorType type) {
  return type.clone(arithmeticType(type.getElementType()));
}

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_GNNFLOATTYPES_H
