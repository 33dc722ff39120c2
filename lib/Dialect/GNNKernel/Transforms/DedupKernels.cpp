//===- DedupKernels.cpp - one gnnk.kernel per distinct kernel -------------===//
//
// Part of gnnc. See the pass description (Passes.td). Kernels are put in
// classes by a structural hash (their attributes without the name, their
// body with values numbered in walk order, locations aside); within a class
// each kernel is compared exactly (OperationEquivalence) with the kernels
// kept so far, so the pass is linear in the size of the kernels unless
// hashes collide.
//
//===----------------------------------------------------------------------===//

#include "KernelSharing.h"

#include "GroupLowering.h"
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h"

#include "mlir/IR/OperationSupport.h"

namespace mlir {
namespace gnnk {
#define GEN_PASS_DEF_GNNDEDUPKERNELS
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h.inc"
} // namespace gnnk
} // namespace mlir

using namespace mlir;
using namespace mlir::gnnk;

namespace {

/// A kernel's attributes (inherent and discardable) without its name.
DictionaryAttr attributesOf(KernelOp kernel) {
  NamedAttrList attrs(kernel->getAttrDictionary());
  attrs.erase(kernel.getSymNameAttrName());
  return attrs.getDictionary(kernel.getContext());
}

/// A hash of the kernel's body: every op's name, attributes, properties and
/// result types, and its operands by their position in the walk (so two
/// bodies equal up to value names hash alike).
llvm::hash_code bodyHash(KernelOp kernel) {
  llvm::DenseMap<Value, unsigned> number;
  auto numberArgs = [&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          number.try_emplace(arg, number.size());
  };
  numberArgs(kernel);
  llvm::hash_code hash = llvm::hash_value(kernel.getBody().getBlocks().size());
  kernel.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op,
                  [&](Value v) {
                    return llvm::hash_value(number.lookup(v));
                  },
                  OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::IgnoreLocations),
        op->getNumRegions());
    for (Value r : op->getResults())
      number.try_emplace(r, number.size());
    numberArgs(op);
  });
  return hash;
}

/// What the heavy-row split of a kernel reads from its launches (see
/// SplitHeavyRows' placementOf): their result types, rows and ties.
bool sameLaunchShape(LaunchOp a, LaunchOp b) {
  return a.getResultTypes() == b.getResultTypes() &&
         a.getRows() == b.getRows() && a.getTiedAttr() == b.getTiedAttr();
}

llvm::hash_code launchShapeHash(LaunchOp l) {
  return llvm::hash_combine(
      llvm::hash_combine_range(l.getResultTypes().begin(),
                               l.getResultTypes().end()),
      l.getRows(), l.getTiedAttr());
}

/// Every shape of `a` is one of `b`'s.
bool shapesWithin(ArrayRef<LaunchOp> a, ArrayRef<LaunchOp> b) {
  return llvm::all_of(a, [&](LaunchOp x) {
    return llvm::any_of(b, [&](LaunchOp y) { return sameLaunchShape(x, y); });
  });
}

} // namespace

bool KernelSharing::sameKernel(Candidate &a, Candidate &b) {
  return a.attrs == b.attrs && shapesWithin(a.shapes, b.shapes) &&
         shapesWithin(b.shapes, a.shapes) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.kernel.getBody(), &b.kernel.getBody(),
             OperationEquivalence::IgnoreLocations);
}

llvm::DenseMap<StringAttr, SmallVector<LaunchOp>>
mlir::gnnk::launchesByKernel(ModuleOp module) {
  llvm::DenseMap<StringAttr, SmallVector<LaunchOp>> launchesOf;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<KernelOp>(op))
      return WalkResult::skip();
    if (auto l = dyn_cast<LaunchOp>(op))
      launchesOf[l.getKernelAttr().getAttr()].push_back(l);
    return WalkResult::advance();
  });
  return launchesOf;
}

KernelOp KernelSharing::share(KernelOp kernel, ArrayRef<LaunchOp> launches) {
  Candidate c{kernel, attributesOf(kernel), {}};
  llvm::hash_code hash = llvm::hash_combine(c.attrs, bodyHash(kernel));
  if (kernel->hasAttr(kSplitAttr)) {
    for (LaunchOp l : launches)
      if (!shapesWithin({l}, c.shapes))
        c.shapes.push_back(l);
    // Order-independent: the shapes form a set.
    size_t shapes = 0;
    for (LaunchOp l : c.shapes)
      shapes += launchShapeHash(l);
    hash = llvm::hash_combine(hash, shapes);
  }
  SmallVector<Candidate, 1> &same = kept[hash];
  auto it = llvm::find_if(same, [&](Candidate &k) { return sameKernel(k, c); });
  if (it != same.end())
    return it->kernel;
  same.push_back(std::move(c));
  return kernel;
}

namespace {

struct DedupKernels
    : public mlir::gnnk::impl::GNNDedupKernelsBase<DedupKernels> {
  using GNNDedupKernelsBase::GNNDedupKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<StringAttr, SmallVector<LaunchOp>> launchesOf =
        launchesByKernel(module);
    // The kernels kept so far; the replacement of each duplicate.
    KernelSharing sharing;
    llvm::DenseMap<StringAttr, KernelOp> replacement;
    SmallVector<KernelOp> duplicates;
    for (KernelOp kernel : module.getOps<KernelOp>()) {
      KernelOp to =
          sharing.share(kernel, launchesOf.lookup(kernel.getSymNameAttr()));
      if (to == kernel)
        continue;
      replacement[kernel.getSymNameAttr()] = to;
      duplicates.push_back(kernel);
    }
    if (duplicates.empty()) {
      markAllAnalysesPreserved();
      return;
    }
    for (auto &[name, launches] : launchesOf)
      if (KernelOp to = replacement.lookup(name))
        for (LaunchOp l : launches)
          l.setKernelAttr(FlatSymbolRefAttr::get(to.getSymNameAttr()));
    for (KernelOp kernel : duplicates)
      kernel.erase();
  }
};
} // namespace
