//===- KernelFamily.h - one record per kernel family ----*- C++ -*-===//
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
///    (gnn/Analysis/Fusion.h) becomes, and the family's whole-function rule
///    if it has one (a `fuse` rule that makes a function one group);
///  - verification (`gnn.kernel_group`'s verifier): the graph ops its body
///    holds and the thread mappings its schedule may use;
///  - schedule selection (`gnn-select-schedules`): the family's `schedule`
///    (most families state a problem for gnn/Analysis/Schedule.h);
///  - lowering (`gnn-lower-to-kernels`): a pattern set per family, one pattern
///    per mapping it implements (lib/Dialect/GNNKernel/Transforms/
///    GroupLowering.h), which must cover `mappings` exactly
///    (unittests/Transforms/KernelFamilyTest.cpp checks it).
/// Graph ops are recognised by GraphOpInterface, not by lists. Adding a family
/// means an enum case in GNNAttrs.td (and one for a new mapping), a record in
/// KernelFamily.cpp, the family's own files and a line for its lowering's
/// pattern set in gnn/Dialect/GNNKernel/Transforms/GroupLowerings.def;
/// docs/Codegen.md has the table of where each lives.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_KERNELFAMILY_H
#define GNN_DIALECT_GNN_IR_KERNELFAMILY_H

#include "gnn/Analysis/Fusion.h"
#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir {
namespace gnn {

/// What a schedule is chosen from besides the group.
struct ScheduleInputs {
  /// The graph's statistics (the module's `gnn.graph_stats`, or the pass's
  /// `stats` option).
  ::gnn::GraphStats graph = ::gnn::ScheduleProblem::defaultStats();
  /// A heavy-row split forced by the pass's `split` option (-1: from the
  /// statistics); applies to families that split rows.
  int64_t split = -1;
};

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
  /// The thread mappings its lowerings implement; a schedule must use one.
  ArrayRef<Mapping> mappings;
  /// The schedule of `group` (one of `mappings`) for `inputs`; emits a
  /// diagnostic on the group and fails when there is none.
  FailureOr<ScheduleAttr> (*schedule)(KernelGroupOp group,
                                      const ScheduleInputs &inputs);
  /// The family's whole-function rule, a rule of gnn-form-kernel-groups'
  /// `fuse` option on by default (empty: none): `formWhole` makes the body
  /// of a function one group of the family when the graph's statistics allow
  /// it and returns whether it did, leaving the function unchanged if not.
  /// The rules run before the fusion planner.
  StringRef wholeFunctionRule = {};
  bool (*formWhole)(func::FuncOp func,
                    const ::gnn::GraphStats &graph) = nullptr;

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

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_IR_KERNELFAMILY_H
