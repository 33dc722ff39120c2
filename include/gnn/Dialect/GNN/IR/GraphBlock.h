//===- GraphBlock.h - a function as one block per graph -*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Batches of small graphs (molecules: 9 to 30 nodes each) spend most of a
/// layer's time launching kernels. When the graph's statistics say that every
/// graph of the batch has at most `capacity` nodes (the small-graph class,
/// GraphStats::smallGraphClass), `gnn-form-kernel-groups` makes the whole
/// function one `graph_block` group: one block per graph computes every op
/// of the function for its graph, the values that steps read kept in shared
/// memory, so a multi-layer model is one launch. The ops it takes:
///  - `gnn.degree` (reversed or not);
///  - `gnn.spmm` sum or mean (reversed or not), unweighted or weighted by an
///    edge tensor argument of the function;
///  - `linalg.matmul` of a node tensor (its rows the nodes) by a
///    static-shaped function argument (a layer's weight);
///  - `linalg.generic` with parallel loops only and one node tensor result
///    written at the identity map, reading node tensors at their node row
///    and static-shaped arguments (biases) by any map of dimensions and
///    constants;
///  - size queries (`tensor.dim` for `tensor.empty`, `tensor.empty`,
///    `linalg.fill` of a constant, `arith.constant`).
/// Every result of the function must be a node tensor the body computes,
/// and the function must have at least two steps (below): a single step is
/// one kernel either way, better served by the tuned per-op mappings.
/// Anything else (edge tensors, reductions over nodes such as weight
/// gradients, max aggregations) keeps the function on the per-op kernels.
///
/// The kernel runs the function's steps in program order, each a loop of
/// the block's threads over the graph's elements followed by a barrier:
/// matmuls, spmms, degrees, and the elementwise ops that a matmul or spmm
/// reads (read many times per element). Other elementwise ops are evaluated
/// where they are read. A step's result that a later step reads lives in a
/// shared array of `capacity` rows; arrays are reused once their value is
/// dead. The group is formed only if the arrays fit in 48 KiB.
///
/// Everything the family is lives here and in its lowering
/// (lib/Dialect/GNNKernel/Transforms/LowerGraphBlock.cpp); its record in
/// KernelFamily.cpp points at the functions below.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GRAPHBLOCK_H
#define GNN_DIALECT_GNN_IR_GRAPHBLOCK_H

#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/IR/KernelFamily.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir {
namespace gnn {

/// The discardable attribute of a `graph_block` group (an integer): the most
/// nodes per graph its kernel holds.
constexpr llvm::StringLiteral kGraphNodesAttrName = "gnn.max_graph_nodes";

/// The steps of a graph-block group and the shared arrays they use.
struct GraphBlockPlan {
  /// Ops computed as steps, in program order.
  SmallVector<Operation *> steps;
  /// The shared array each step's result is kept in, or -1 when no later
  /// step reads it (a result only stored to memory).
  SmallVector<int> stepArray;
  /// Elements per node of each shared array.
  SmallVector<int64_t> arrayRows;
  /// Nodes per graph the arrays hold.
  int64_t capacity = 0;
  /// Bytes per element (4 for f32, 8 for f64).
  int64_t elementBytes = 4;

  /// The bytes of shared memory of the arrays.
  int64_t sharedBytes() const;

  /// Plans the ops of `body` (a group's body, or a function's) whose
  /// results `results` are stored to memory; fails with the reason in `why`
  /// when an op is not one graph blocks take.
  static FailureOr<GraphBlockPlan> of(Block &body, ValueRange results,
                                      int64_t capacity, std::string &why);
};

/// Whether `value` is one a step computes (as opposed to an elementwise op
/// evaluated where it is read).
bool isGraphBlockStep(Operation *op);

/// The family's record (KernelFamily.h):
/// - whether a body's graph ops are degrees and spmms only;
bool acceptsGraphBlock(ArrayRef<StringRef> graphOps);
/// - the schedule: block_per_graph, a block of 128 threads;
FailureOr<ScheduleAttr> scheduleGraphBlock(KernelGroupOp group,
                                           const ScheduleInputs &inputs);
/// - the whole-function rule `graph_block`: makes the body of `func` one
///   group if the graph's small-graph class is not 0, every op is one graph
///   blocks take and the shared arrays for graphs of that class fit; returns
///   whether it did. Leaves the function unchanged otherwise.
bool formGraphBlock(func::FuncOp func, const ::gnn::GraphStats &graph);

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_GRAPHBLOCK_H
