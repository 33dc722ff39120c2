//===- GNNSizes.h - the sizes gnnc accepts ------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The largest tensors gnnc compiles, and the overflow-checked arithmetic on
/// their sizes. Sizes come from user IR (static dimensions up to 2^63 - 1)
/// and from graphs; products of them must never wrap, or a Program would
/// allocate a few bytes for a tensor its kernels index far beyond.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNSIZES_H
#define GNN_DIALECT_GNN_IR_GNNSIZES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace gnn {

/// The most bytes the static dimensions of a tensor may hold (dynamic ones
/// counted as 1): 2^40, 1 TiB, beyond the memory of any device. Row widths
/// below it leave the planners' products with heads, lanes and vector widths
/// far from 64-bit overflow.
constexpr int64_t kMaxStaticTensorBytes = int64_t(1) << 40;

/// The product of the static dimensions of `type` (dynamic ones counted as
/// 1), or nullopt when it overflows int64.
std::optional<int64_t> staticElementCount(RankedTensorType type);

/// Bytes of one element of `type` (at least 1).
int64_t elementBytes(RankedTensorType type);

/// Checks that the static dimensions of `value`'s type hold at most
/// kMaxStaticTensorBytes; emits on `op`, naming the operand `name`.
LogicalResult verifyStaticSize(Operation *op, Value value, StringRef name);

/// Checks every ranked tensor operand and result of `op` with
/// verifyStaticSize.
LogicalResult verifyStaticSizes(Operation *op);

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_GNNSIZES_H
