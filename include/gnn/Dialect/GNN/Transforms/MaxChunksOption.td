//===- MaxChunksOption.td - the max-chunks pass option ----*- tablegen -*-===//
//
// Part of gnnc. The `max-chunks` option of gnn-split-heavy-rows, declared
// once; its default and bounds are C++ constants
// (gnn/Dialect/GNN/Transforms/MaxChunks.h).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_MAXCHUNKSOPTION_TD
#define GNN_DIALECT_GNN_TRANSFORMS_MAXCHUNKSOPTION_TD

include "mlir/Pass/PassBase.td"

def GNN_MaxChunksOption
    : Option<"maxChunks", "max-chunks", "int64_t",
             "::mlir::gnn::kDefaultMaxChunks",
             "the most chunks of a split heavy-row kernel (blocks of its "
             "partial and final kernels, and partial results), from 1 to "
             "2^31 - 1; chunks hold at least edges / max-chunks positions">;

#endif // GNN_DIALECT_GNN_TRANSFORMS_MAXCHUNKSOPTION_TD
