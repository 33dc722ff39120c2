//===- GraphStatsAttr.h - #gnn.graph_stats <-> gnn::GraphStats --*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The graph statistics a module is compiled for, as the module attribute
/// `gnn.graph_stats` (`#gnn.graph_stats<...>`): set by the compile driver or
/// from the `stats` option of `gnn-select-schedules`, read by the passes.
/// Kept out of GNNDialect.h: it names the `::gnn` namespace, which files
/// that use `namespace mlir` would find ambiguous with `mlir::gnn`.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GRAPHSTATSATTR_H
#define GNN_DIALECT_GNN_IR_GRAPHSTATSATTR_H

#include "gnn/Analysis/GraphStats.h"
#include "gnn/Dialect/GNN/IR/GNNDialect.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace gnn {

/// The module attribute's name.
inline constexpr llvm::StringLiteral kGraphStatsAttr = "gnn.graph_stats";

/// `stats` as an attribute (the histograms without their trailing zeros).
GraphStatsAttr graphStatsAttr(MLIRContext *context,
                              const ::gnn::GraphStats &stats);
/// The statistics `attr` holds.
::gnn::GraphStats statsOf(GraphStatsAttr attr);

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_GRAPHSTATSATTR_H
