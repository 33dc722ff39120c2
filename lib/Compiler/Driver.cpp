//===- Driver.cpp - gnn IR + graph statistics -> Program ------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"

#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/IR/GraphStatsAttr.h"
#include "gnn/Dialect/GNN/Transforms/GemmBias.h"
#include "gnn/Dialect/GNN/Transforms/Pipelines.h"
#include "gnn/Dialect/GNNKernel/Transforms/Passes.h"
#include "gnn/Target/CUDA/TranslateToCUDA.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::gnn;

void mlir::gnn::buildCUDAPipeline(OpPassManager &pm,
                                  const CUDAPipelineOptions &options) {
  // Kernel groups (with fusion) and their schedules from the statistics.
  CodegenPipelineOptions codegen;
  codegen.stats = options.stats;
  codegen.maxChunks = options.maxChunks;
  codegen.split = options.split;
  codegen.fuse = ArrayRef<std::string>(options.fuse);
  buildCodegenPipeline(pm, codegen);
  // One gnnk kernel per group, launched in its place.
  gnnk::GNNLowerToKernelsOptions lower;
  lower.indexBits = options.indexBits;
  // Identical kernels (a chain of the same op) shared as they are made, so
  // the IR, the split below, the source and the Program grow with the
  // distinct kernels, not the ops.
  lower.shareKernels = true;
  pm.addPass(gnnk::createGNNLowerToKernels(lower));
  // Any the lowering could not match (it finds the kernel of each group
  // next to its function): one walk, nothing changed when none is left.
  pm.addPass(gnnk::createGNNDedupKernels());
  // Rows above the schedule's threshold spread over the GPU.
  gnnk::GNNSplitHeavyRowsOptions split;
  split.maxChunks = options.maxChunks;
  pm.addPass(gnnk::createGNNSplitHeavyRows(split));
}

LogicalResult mlir::gnn::lowerForCUDA(ModuleOp module,
                                      const CompileOptions &options) {
  // Lowered already: no graph op and no linalg.generic is left (a function
  // of elementwise work only has no graph op but still needs its kernels)
  // but the biases that GEMMs add, the ReLUs their epilogues apply and the
  // column sums their row splits compute (runsInAGemm: never a kernel).
  bool lowered = true;
  module.walk([&](Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (isa<GNNDialect>(op->getDialect()) || (generic && !runsInAGemm(generic)))
      lowered = false;
  });
  if (lowered)
    return success();
  // Kernels index the one graph a Program binds: a function of two graphs
  // would be lowered as if they were one.
  for (auto f : module.getOps<func::FuncOp>())
    if (failed(checkOneGraph(f)))
      return failure();
  PassManager pm(module.getContext());
  // The statistics travel as the module's attribute, read by the passes.
  module->setAttr(kGraphStatsAttr,
                  graphStatsAttr(module.getContext(), options.stats));
  CUDAPipelineOptions pipeline;
  pipeline.indexBits = options.indexBits;
  pipeline.maxChunks = options.maxChunks;
  pipeline.split = options.split;
  buildCUDAPipeline(pm, pipeline);
  return pm.run(module);
}

FailureOr<::gnn::runtime::Program>
mlir::gnn::compileToProgram(ModuleOp module, func::FuncOp func,
                            const CompileOptions &options) {
  if (failed(lowerForCUDA(module, options)))
    return failure();
  return buildProgram(func, options.indexBits, options.stats.csrOrder);
}

/// A copy of `module` with only `keep` and the functions something in it
/// refers to: what is lowered and printed for them. The functions reached
/// from `keep` and from the module's other ops, each walked once (erasing
/// the functions without uses again and again until none was left asked the
/// whole module about every function per round: quadratic in the functions).
static OwningOpRef<ModuleOp> copyFor(ModuleOp module,
                                     ArrayRef<func::FuncOp> keep) {
  OwningOpRef<ModuleOp> copy = module.clone();
  SymbolTable table(*copy);
  llvm::SmallPtrSet<Operation *, 8> live;
  SmallVector<Operation *> work;
  for (func::FuncOp f : keep)
    if (Operation *kept = table.lookup(f.getSymNameAttr());
        kept && live.insert(kept).second)
      work.push_back(kept);
  for (Operation &op : copy->getBody()->getOperations())
    if (!isa<func::FuncOp>(op))
      work.push_back(&op);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(op);
    // Uses that cannot be known (an unregistered op that may be a symbol
    // table): every function stays.
    if (!uses)
      return copy;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto f = table.lookup<func::FuncOp>(
          use.getSymbolRef().getRootReference());
      if (f && live.insert(f).second)
        work.push_back(f);
    }
  }
  for (auto f : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (!live.count(f))
      f.erase();
  return copy;
}

FailureOr<::gnn::runtime::Program>
mlir::gnn::compileFunction(ModuleOp module, func::FuncOp func,
                           const CompileOptions &options) {
  OwningOpRef<ModuleOp> copy = copyFor(module, {func});
  return compileToProgram(
      *copy, copy->lookupSymbol<func::FuncOp>(func.getSymName()), options);
}

static bool sameOptions(const CompileOptions &a, const CompileOptions &b) {
  return a.indexBits == b.indexBits && a.maxChunks == b.maxChunks &&
         a.split == b.split && a.stats == b.stats;
}

FailureOr<::gnn::runtime::TrainingProgram>
mlir::gnn::compileTrainingProgram(ModuleOp module,
                                  const TrainingFunctions &training,
                                  const CompileOptions &forward,
                                  const CompileOptions &backward) {
  ::gnn::runtime::TrainingProgram t;
  func::FuncOp fwdFunc = training.forward, bwdFunc = training.backward;
  auto compile = [](ModuleOp copy, func::FuncOp f,
                    const CompileOptions &options) {
    return compileToProgram(
        copy, copy.lookupSymbol<func::FuncOp>(f.getSymName()), options);
  };
  // With the same options both Programs come from one lowered copy: one
  // source, compiled once (the kernel compiler caches it).
  OwningOpRef<ModuleOp> both = copyFor(module, {fwdFunc, bwdFunc});
  FailureOr<::gnn::runtime::Program> fwd = compile(*both, fwdFunc, forward);
  if (failed(fwd))
    return failure();
  FailureOr<::gnn::runtime::Program> bwd =
      sameOptions(forward, backward)
          ? compile(*both, bwdFunc, backward)
          : compileFunction(module, bwdFunc, backward);
  if (failed(bwd))
    return failure();
  t.forward = std::move(*fwd);
  t.backward = std::move(*bwd);
  t.numResults = training.numResults;
  // @f_bwd(graphs, residuals, result gradients) -> argument gradients; its
  // buffers are named by argument and result position (arg<j>, result<m>).
  size_t tensor = 0;
  for (unsigned j = 0; j < bwdFunc.getNumArguments(); ++j) {
    if (isa<GraphType>(bwdFunc.getArgument(j).getType()))
      continue;
    std::string step;
    if (tensor < training.residuals.size()) {
      ResidualSource r = training.residuals[tensor];
      step = (r.kind == ResidualSource::Kind::Argument ? "arg" : "result") +
             std::to_string(r.index);
    } else {
      step = "dresult" + std::to_string(tensor - training.residuals.size());
    }
    ++tensor;
    t.backwardBindings["arg" + std::to_string(j)] = step;
  }
  for (auto [m, arg] : llvm::enumerate(training.gradients))
    t.backwardBindings["result" + std::to_string(m)] =
        "grad" + std::to_string(arg);
  if (::gnn::runtime::Status s = t.verify(); !s.ok())
    return bwdFunc.emitOpError("internal: the training program "
                               "does not verify: ")
           << s.message();
  return t;
}

void mlir::gnn::registerCompilerPipelines() {
  registerGNNPassesAndPipelines();
  gnnk::registerGNNKernelPasses();
  PassPipelineRegistration<CUDAPipelineOptions>(
      "gnn-cuda-pipeline",
      "graph-level IR to gnnk kernels and launches, ready for the CUDA "
      "printer and the Program",
      buildCUDAPipeline);
}
