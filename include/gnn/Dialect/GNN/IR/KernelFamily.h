//===- KernelFamily.h - one record per kernel family -------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A `gnn.kernel_group`'s `family` attribute is the single switch between the
/// parts of the compiler that handle kernel groups. Each family is described
/// once, here, and read by
///  - grouping (`gnn-form-kernel-groups`): which family a planned group
///    (gnn/Analysis/Fusion.h) becomes;
///  - verification (`gnn.kernel_group`'s verifier): the graph ops its body
///    holds and the thread mappings its schedule may use;
///  - schedule selection (`gnn-select-schedules`): which op the schedule is
///    chosen for and as what kind of problem (gnn/Analysis/Schedule.h);
///  - lowering (`gnn-lower-to-kernels`): a pattern set per family, one pattern
///    per mapping it implements (lib/Dialect/GNNKernel/Transforms/
///    GroupLowering.h), which must cover `mappings` (a test checks it).
/// Graph ops are recognised by GraphOpInterface, not by lists. Adding a family
/// means an enum case in GNNAttrs.td, a record in KernelFamily.cpp and its
/// lowering patterns; docs/Codegen.md has the table of where each lives.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_KERNELFAMILY_H
#define GNN_DIALECT_GNN_IR_KERNELFAMILY_H

#include "gnn/Analysis/Fusion.h"
#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include <optional>

namespace mlir {
namespace gnn {

/// Everything the compiler knows about one kernel family.
struct KernelFamily {
  GroupFamily family;
  /// The fusion planner's family its groups come from; none for a family
  /// formed outside the planner.
  std::optional<::gnn::FusionFamily> planned;
  /// The graph ops its body holds, in program order, in words.
  StringRef shape;
  /// Whether `graphOps` (the names of a body's graph ops, in program order,
  /// without the dialect prefix) have the family's shape.
  bool (*accepts)(ArrayRef<StringRef> graphOps);
  /// The op of `body` its schedule is chosen for (the kind and row width of
  /// the problem come from it).
  Operation *(*anchor)(Block &body);
  /// The scheduling kind of a group of the family whose anchor is `anchor`.
  ::gnn::GroupKind (*kind)(Operation *anchor);
  /// The thread mappings its lowerings implement; a schedule must use one.
  ArrayRef<Mapping> mappings;

  /// Whether the family's lowerings implement `mapping`.
  bool implements(Mapping mapping) const;
};

/// Every family, in the order of the GroupFamily enum.
ArrayRef<KernelFamily> kernelFamilies();
/// The record of `family`.
const KernelFamily &kernelFamily(GroupFamily family);
/// The record of the family a planned group of `planned` becomes.
const KernelFamily &kernelFamily(::gnn::FusionFamily planned);

/// The names of the graph ops of `body` in program order ("spmm", ...).
SmallVector<StringRef> graphOpNames(Block &body);

/// The scheduling problem of `group` (kind and row widths; the graph's
/// statistics and the chunk limit are the caller's), from its family's
/// record.
::gnn::ScheduleProblem scheduleProblem(KernelGroupOp group);

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_KERNELFAMILY_H
