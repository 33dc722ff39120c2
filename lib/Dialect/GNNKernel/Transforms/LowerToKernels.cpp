//===- LowerToKernels.cpp - kernel groups to gnnk kernels -----------------===//
//
// Part of gnnc. Lowers each scheduled kernel group with the pattern of its
// family and its schedule's mapping (GroupLowering.h) and erases it; stops at
// the first group that fails.
//
//===----------------------------------------------------------------------===//

#include "GroupLowering.h"
#include "KernelSharing.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace gnnk {
#define GEN_PASS_DEF_GNNLOWERTOKERNELS
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h.inc"
} // namespace gnnk
} // namespace mlir

using namespace mlir;
using namespace mlir::gnnk;

LogicalResult GroupLoweringPattern::matchAndRewrite(gnn::KernelGroupOp group,
                                                    PatternRewriter &) const {
  gnn::ScheduleAttr schedule = group.getScheduleAttr();
  if (group.getFamily() != family || !schedule ||
      schedule.getMapping() != mapping)
    return failure();
  if (lowerWhole)
    return lowerWhole(group, indexBits);
  FailureOr<GroupParts> parts = GroupParts::of(group);
  if (failed(parts))
    return failure();
  return lower(group, *parts, indexBits);
}

void mlir::gnnk::populateGroupLoweringPatterns(RewritePatternSet &patterns,
                                               int indexBits) {
#define GNN_GROUP_LOWERING(Family)                                             \
  populate##Family##LoweringPatterns(patterns, indexBits);
#include "gnn/Dialect/GNNKernel/Transforms/GroupLowerings.def"
}

/// Lowers one group with the pattern of its family and mapping.
static LogicalResult lowerGroup(gnn::KernelGroupOp group,
                                PatternApplicator &applicator) {
  gnn::ScheduleAttr schedule = group.getScheduleAttr();
  if (!schedule)
    return group.emitOpError("has no schedule; run gnn-select-schedules (or "
                             "the gnn-codegen-pipeline) first");
  // A pattern that matches and fails has said why; none matching has not.
  bool reported = false;
  ScopedDiagnosticHandler handler(group.getContext(), [&](Diagnostic &d) {
    reported |= d.getSeverity() == DiagnosticSeverity::Error;
    return failure(); // passes it on
  });
  PatternRewriter rewriter(group.getContext());
  rewriter.setInsertionPoint(group);
  if (succeeded(applicator.matchAndRewrite(group, rewriter)))
    return success();
  if (reported)
    return failure();
  return group.emitOpError() << "has no lowering for a family = "
                             << gnn::stringifyGroupFamily(group.getFamily())
                             << " group with mapping = "
                             << gnn::stringifyMapping(schedule.getMapping());
}

/// The CUDA backend computes a function in one arithmetic type: every float
/// tensor of `func` (arguments, results of its ops, nested ones included) is
/// of f32 or of the storage types bf16 and f16 computed in f32 (mixed
/// through arith.extf / arith.truncf in linalg bodies), or every one is f64.
/// Emits an error on the first tensor of the other arithmetic type, with a
/// note on the first float tensor, and fails.
static LogicalResult checkOneArithmeticType(func::FuncOp func) {
  Type first;
  Location firstLoc = func.getLoc();
  auto check = [&](Type type, Location loc,
                   function_ref<InFlightDiagnostic()> emit) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    auto element =
        tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
    if (!element)
      return success();
    if (!first) {
      first = element;
      firstLoc = loc;
      return success();
    }
    if (mlir::gnn::arithmeticType(element) == mlir::gnn::arithmeticType(first))
      return success();
    InFlightDiagnostic diag = emit();
    diag << "uses " << type << " in a function whose first float tensor is "
         << first
         << "; the CUDA backend computes a function in one arithmetic type "
            "(f32 for f32, bf16 and f16 tensors, or f64 for f64 ones)";
    diag.attachNote(firstLoc) << "the first " << first << " tensor";
    return diag;
  };
  for (BlockArgument arg : func.getArguments())
    if (failed(check(arg.getType(), arg.getLoc(), [&] {
          return mlir::emitError(arg.getLoc())
                 << "argument #" << arg.getArgNumber() << " of @"
                 << func.getSymName() << " ";
        })))
      return failure();
  WalkResult walk = func.getBody().walk([&](Operation *op) {
    // An empty tensor holds no values: its user is the op to blame.
    if (isa<tensor::EmptyOp>(op))
      return WalkResult::advance();
    for (Type t : op->getResultTypes())
      if (failed(check(t, op->getLoc(), [&] { return op->emitOpError(); })))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

namespace {
struct LowerToKernels
    : public mlir::gnnk::impl::GNNLowerToKernelsBase<LowerToKernels> {
  using GNNLowerToKernelsBase::GNNLowerToKernelsBase;

  void runOnOperation() override {
    if (indexBits != 32 && indexBits != 64) {
      // The cast: a pass option streams into a diagnostic as nothing.
      getOperation().emitError() << "expects index-bits to be 32 or 64 but got "
                                 << static_cast<int>(indexBits);
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(checkOneArithmeticType(func)))
        return signalPassFailure();
    SmallVector<gnn::KernelGroupOp> groups;
    getOperation().walk([&](gnn::KernelGroupOp g) { groups.push_back(g); });
    // Kernels are module symbols, groups are named per function: a name used
    // in several functions (say @f, @f_fwd and @f_bwd from gnn-autodiff)
    // becomes `<function>_<name>` in each, the function name's other
    // characters turned into '_'. Within one function a name stays an error.
    llvm::StringMap<llvm::SmallPtrSet<Operation *, 2>> users;
    for (gnn::KernelGroupOp group : groups)
      users[group.getKernel()].insert(
          group->getParentOfType<FunctionOpInterface>());
    for (gnn::KernelGroupOp group : groups) {
      if (users[group.getKernel()].size() < 2)
        continue;
      auto func = group->getParentOfType<FunctionOpInterface>();
      std::string prefix = func ? func.getName().str() : "module";
      for (char &c : prefix)
        if (!isalnum(static_cast<unsigned char>(c)))
          c = '_';
      group.setKernel((prefix + "_" + group.getKernel()).str());
    }
    RewritePatternSet patterns(&getContext());
    populateGroupLoweringPatterns(patterns, indexBits);
    FrozenRewritePatternSet frozen(std::move(patterns));
    PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    llvm::StringSet<> names;
    sharing = KernelSharing();
    for (gnn::KernelGroupOp group : groups) {
      StringRef name = group.getKernel();
      bool identifier = !name.empty() && !isdigit(name.front()) &&
                        llvm::all_of(name, [](char c) {
                          return isalnum(static_cast<unsigned char>(c)) ||
                                 c == '_';
                        });
      if (!identifier) {
        group.emitOpError() << "expects a kernel name made of letters, digits "
                               "and '_' (not starting with a digit) but got '"
                            << name << "'";
        return signalPassFailure();
      }
      // The kernels split heavy rows make are named `<name>_partial` and
      // `<name>_final`: a group of that name could be one of them.
      std::string why = reservedKernelName(name);
      if (why.empty() &&
          (name.ends_with("_final") || name.ends_with("_partial")))
        why = "a name the kernels split from another group's take (it "
              "ends in '_final' or '_partial')";
      if (!why.empty()) {
        group.emitOpError()
            << "expects a kernel name not reserved in CUDA C++ or by gnnc "
               "but got '"
            << name << "' (" << why
            << "); allowed: an identifier that is not a C/C++ keyword, "
               "'main', 'idx_t', a name the CUDA headers declare (math, "
               "integer, atomic, texture and surface functions, vector types "
               "and their make_ functions, built-in variables, 'cuda' and "
               "'CUDART' names) or one device code calls (printf, malloc, "
               "free, memcpy, memset, assert, clock), does not start with "
               "'__', '_' and a capital letter, or '"
            << kReservedKernelPrefix
            << "', and does not end in '_final' or '_partial'";
        return signalPassFailure();
      }
      if (!names.insert(name).second) {
        group.emitOpError() << "reuses the kernel name '" << group.getKernel()
                            << "'";
        return signalPassFailure();
      }
      auto func = group->getParentOfType<func::FuncOp>();
      if (failed(lowerGroup(group, applicator)))
        return signalPassFailure();
      if (shareKernels)
        share(group, func);
      group->erase();
    }
  }

  /// With share-kernels: the kernels just made for `group` (placed before
  /// `func`, launched just before the group: `<name>`, and `<name>_final`
  /// after it for a split sum over rows) each replaced by an identical one
  /// made before, if any. Erased at once, 200,000 chained spmm lowered in
  /// 37 s and 3.4 GB with their kernels, since shared afterwards.
  void share(gnn::KernelGroupOp group, func::FuncOp func) {
    if (!func)
      return;
    std::string name = group.getKernel().str();
    SmallVector<KernelOp, 2> made;
    auto last = dyn_cast_or_null<KernelOp>(func->getPrevNode());
    if (last && last.getSymName() == name + "_final") {
      made.push_back(last);
      last = dyn_cast_or_null<KernelOp>(last->getPrevNode());
    }
    if (last && last.getSymName() == name)
      made.push_back(last);
    for (KernelOp kernel : made) {
      LaunchOp launch;
      for (Operation *op = group->getPrevNode(); op && !launch;
           op = op->getPrevNode())
        if (auto l = dyn_cast<LaunchOp>(op);
            l && l.getKernelAttr().getAttr() == kernel.getSymNameAttr())
          launch = l;
      if (!launch)
        continue;
      KernelOp same = sharing.share(kernel, {launch});
      if (same == kernel)
        continue;
      launch.setKernelAttr(FlatSymbolRefAttr::get(same.getSymNameAttr()));
      kernel.erase();
    }
  }

  KernelSharing sharing;
};
} // namespace
