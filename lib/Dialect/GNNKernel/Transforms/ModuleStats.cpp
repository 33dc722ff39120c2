//===- ModuleStats.cpp - the module's graph statistics for lowerings ------===//
//
// Part of gnnc. Kept apart: GraphStatsAttr.h brings the ::gnn namespace of
// the statistics, which the lowerings' `gnn::` (mlir::gnn) would collide with.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"
#include "gnn/Dialect/GNN/IR/GraphStatsAttr.h"

std::optional<double> mlir::gnnk::moduleMeanInDegree(mlir::Operation *op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  auto attr = module ? llvm::dyn_cast_or_null<mlir::gnn::GraphStatsAttr>(
                           module->getAttr(mlir::gnn::kGraphStatsAttr))
                     : mlir::gnn::GraphStatsAttr();
  if (!attr)
    return std::nullopt;
  ::gnn::GraphStats stats = mlir::gnn::statsOf(attr);
  if (stats.nodes <= 0)
    return std::nullopt;
  return static_cast<double>(stats.edges) / static_cast<double>(stats.nodes);
}
