//===- GNNSizes.cpp - the sizes gnnc accepts ------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNSizes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::gnn;

std::optional<int64_t> mlir::gnn::staticElementCount(RankedTensorType type) {
  int64_t count = 1;
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      continue;
    if (llvm::MulOverflow(count, d, count))
      return std::nullopt;
  }
  return count;
}

int64_t mlir::gnn::elementBytes(RankedTensorType type) {
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat())
    return 1;
  return std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
}

LogicalResult mlir::gnn::verifyStaticSize(Operation *op, Value value,
                                          StringRef name) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return success();
  std::optional<int64_t> count = staticElementCount(type);
  int64_t bytes = 0;
  bool bytesOverflow =
      count && llvm::MulOverflow(*count, elementBytes(type), bytes);
  if (count && !bytesOverflow && bytes <= kMaxStaticTensorBytes)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "expects the static dimensions of " << name
                            << " to hold at most " << kMaxStaticTensorBytes
                            << " bytes (2^40) but got " << Type(type) << " (";
  if (!count)
    diag << "an element count beyond 2^63";
  else if (bytesOverflow)
    diag << *count << " elements, beyond 2^63 bytes";
  else
    diag << bytes << " bytes";
  return diag << ")";
}

LogicalResult mlir::gnn::verifyStaticSizes(Operation *op) {
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (failed(verifyStaticSize(op, operand, "operand #" + std::to_string(i))))
      return failure();
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (failed(verifyStaticSize(op, result, "result #" + std::to_string(i))))
      return failure();
  return success();
}
