//===- FormKernelGroups.cpp - wrap graph ops into kernel groups -----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNFORMKERNELGROUPS
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

/// The short name of a graph op, used to name its group ("spmm_0").
static StringRef kindName(Operation *op) {
  if (isa<SpmmOp>(op)) return "spmm";
  if (isa<ReduceOp>(op)) return "reduce";
  if (isa<EdgeSoftmaxOp>(op)) return "edge_softmax";
  if (isa<SddmmOp>(op)) return "sddmm";
  if (isa<GatherOp>(op)) return "gather";
  if (isa<DegreeOp>(op)) return "degree";
  return "elementwise";
}

/// An elementwise consumer that can run in the producer's kernel: all loops
/// parallel, one result shaped like `producer`, `producer` read with the
/// identity map, every map a projected permutation, and the init not read.
static bool isAbsorbableConsumer(linalg::GenericOp generic, Value producer) {
  if (generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 || !generic.hasPureTensorSemantics())
    return false;
  if (generic->getResult(0).getType() != producer.getType())
    return false;
  bool readsProducer = false;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(in);
    if (!map.isProjectedPermutation())
      return false;
    if (in->get() == producer) {
      if (!map.isIdentity())
        return false;
      readsProducer = true;
    }
  }
  OpOperand *init = generic.getDpsInitOperand(0);
  if (!generic.getMatchingIndexingMap(init).isIdentity() ||
      generic.payloadUsesValueFromOperand(init))
    return false;
  return readsProducer;
}

/// If `current`'s users are one absorbable elementwise consumer plus size
/// queries, returns the consumer after making it write into `current` (its
/// init is never read, so this changes nothing) and erasing the size queries
/// and empty tensors that become dead. Otherwise returns null.
static linalg::GenericOp takeConsumer(Value current) {
  linalg::GenericOp consumer;
  for (Operation *user : current.getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || consumer || !isAbsorbableConsumer(generic, current))
      return nullptr;
    consumer = generic;
  }
  if (!consumer || consumer->getBlock() != current.getParentBlock())
    return nullptr;
  OpOperand *init = consumer.getDpsInitOperand(0);
  Operation *oldInit = init->get().getDefiningOp();
  init->set(current);
  // tensor.empty(tensor.dim(current)) chains that fed the init are now dead.
  SmallVector<Operation *> worklist;
  if (oldInit)
    worklist.push_back(oldInit);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isa<tensor::EmptyOp, tensor::DimOp>(op) || !op->use_empty())
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    op->erase();
  }
  for (Operation *user : llvm::make_early_inc_range(current.getUsers()))
    if (isa<tensor::DimOp>(user) && user->use_empty())
      user->erase();
  bool onlyConsumer = llvm::all_of(
      current.getUsers(), [&](Operation *u) { return u == consumer.getOperation(); });
  return onlyConsumer ? consumer : nullptr;
}

/// Wraps `members` (in program order, each feeding the next) into a group
/// placed at the last member; returns it.
static KernelGroupOp wrap(ArrayRef<Operation *> members, StringRef name) {
  Operation *last = members.back();
  OpBuilder b(last);
  auto group = KernelGroupOp::create(b, last->getLoc(), last->getResultTypes(),
                                     b.getStringAttr(name), ScheduleAttr());
  Block *body = new Block();
  group.getBody().push_back(body);
  b.setInsertionPointToEnd(body);
  auto yield = YieldOp::create(b, last->getLoc(), last->getResults());
  for (Operation *op : members)
    op->moveBefore(yield);
  for (auto [inner, outer] : llvm::zip(last->getResults(), group.getResults()))
    inner.replaceUsesWithIf(outer, [&](OpOperand &use) {
      return !group->isAncestor(use.getOwner());
    });
  return group;
}

namespace {
struct FormKernelGroups
    : public mlir::gnn::impl::GNNFormKernelGroupsBase<FormKernelGroups> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    llvm::StringMap<int> counters;
    auto nextName = [&](StringRef kind) {
      return (kind + "_" + Twine(counters[kind]++)).str();
    };
    // Graph ops with their consumer chains.
    SmallVector<Operation *> graphOps;
    func.walk([&](Operation *op) {
      if (isa<GatherOp, SddmmOp, EdgeSoftmaxOp, SpmmOp, ReduceOp, DegreeOp>(op) &&
          !op->getParentOfType<KernelGroupOp>())
        graphOps.push_back(op);
    });
    for (Operation *op : graphOps) {
      SmallVector<Operation *> members = {op};
      Value current = op->getResult(0);
      while (linalg::GenericOp user = takeConsumer(current)) {
        members.push_back(user);
        current = user->getResult(0);
      }
      wrap(members, nextName(kindName(op)));
    }
    // Remaining elementwise and reduction work: one group each.
    SmallVector<Operation *> dense;
    for (Operation &op : func.getBody().front())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op))
        if (!isa<linalg::MatmulOp, linalg::FillOp>(&op) &&
            linalgOp.hasPureTensorSemantics())
          dense.push_back(&op);
    for (Operation *op : dense)
      wrap({op}, nextName("elementwise"));
  }
};
} // namespace
