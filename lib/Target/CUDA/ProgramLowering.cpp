//===- ProgramLowering.cpp - a gnn function as a runtime Program ----------===//
//
// Part of gnnc. Walks the function after gnn-codegen-pipeline: kernel groups
// become launches of the emitted kernels, linalg.matmul becomes a cuBLAS GEMM,
// reshapes become aliases of one buffer, and the values returned are written
// straight into the output buffers.
//
//===----------------------------------------------------------------------===//

#include "gnn/Target/CUDA/TranslateToCUDA.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::gnn;
namespace rt = ::gnn::runtime;

LogicalResult mlir::gnn::prepareForCodegen(ModuleOp module,
                                           const CodegenOptions &options) {
  bool ungrouped = false;
  module.walk([&](Operation *op) {
    if (isa<GNNDialect>(op->getDialect()) && !isa<KernelGroupOp, YieldOp>(op) &&
        !op->getParentOfType<KernelGroupOp>())
      ungrouped = true;
  });
  if (!ungrouped)
    return success();
  PassManager pm(module.getContext());
  CodegenPipelineOptions pipeline;
  pipeline.meanDegree = options.meanDegree;
  pipeline.maxDegree = options.maxDegree;
  buildCodegenPipeline(pm, pipeline);
  return pm.run(module);
}

namespace {

/// Builds the Program while walking the function.
class Lowering {
public:
  Lowering(func::FuncOp func, const EmitOptions &options)
      : func(func), options(options) {}

  FailureOr<rt::Program> run();

private:
  func::FuncOp func;
  const EmitOptions &options;
  rt::Program program;
  llvm::DenseMap<Value, std::string> buffer;
  llvm::DenseMap<Value, std::string> reserved; ///< values written into outputs
  llvm::StringMap<size_t> declared;
  int temps = 0;

  FailureOr<std::string> size(Value v, Operation *where) {
    FailureOr<std::string> rows = rowsFormula(v);
    FailureOr<int64_t> row = rowElements(v, where);
    if (failed(rows) || failed(row))
      return failure();
    return *rows + " * " + std::to_string(*row);
  }
  LogicalResult declare(const std::string &name, rt::BufferRole role,
                        const std::string &elements, Operation *where) {
    auto f = rt::Formula::parse(elements);
    if (!f.ok())
      return where->emitOpError() << "has an invalid size: " << f.message();
    declared[name] = program.buffers.size();
    program.buffers.push_back({name, role, rt::DType::F32, *f});
    return success();
  }
  /// A fresh buffer for `v` (a temp, or the output it was reserved for).
  FailureOr<std::string> define(Value v, Operation *where) {
    std::string name;
    rt::BufferRole role = rt::BufferRole::Temp;
    auto it = reserved.find(v);
    if (it != reserved.end()) {
      name = it->second;
      role = rt::BufferRole::Output;
    } else {
      name = "t" + std::to_string(temps++);
    }
    FailureOr<std::string> elements = size(v, where);
    if (failed(elements) || failed(declare(name, role, *elements, where)))
      return failure();
    buffer[v] = name;
    return name;
  }
  /// The buffer holding `v`, materialising constant fills on demand.
  FailureOr<std::string> use(Value v, Operation *where);
  LogicalResult launch(const std::string &kernel, const std::string &threads,
                       int64_t block, std::vector<rt::KernelArg> args,
                       Operation *where);
};

} // namespace

FailureOr<std::string> Lowering::use(Value v, Operation *where) {
  auto it = buffer.find(v);
  if (it != buffer.end())
    return it->second;
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    auto c = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
    if (!f)
      return fill.emitOpError("fills with a value that is not a constant; the "
                              "CUDA backend needs constants");
    FailureOr<std::string> name = define(v, fill);
    if (failed(name))
      return failure();
    program.steps.push_back(rt::FillStep{*name, static_cast<float>(f.getValueAsDouble())});
    return name;
  }
  if (auto empty = v.getDefiningOp<tensor::EmptyOp>()) {
    FailureOr<std::string> name = define(v, empty);
    if (failed(name))
      return failure();
    program.steps.push_back(rt::FillStep{*name, 0.0f});
    return name;
  }
  return where->emitOpError("reads a value the CUDA backend has no buffer for");
}

LogicalResult Lowering::launch(const std::string &kernel,
                               const std::string &threads, int64_t block,
                               std::vector<rt::KernelArg> args,
                               Operation *where) {
  rt::LaunchStep l;
  l.kernel = kernel;
  auto grid = rt::Formula::parse("ceil_div(" + threads + ", " +
                                 std::to_string(block) + ")");
  if (!grid.ok())
    return where->emitOpError() << "has an invalid grid: " << grid.message();
  l.grid[0] = *grid;
  l.grid[1] = l.grid[2] = rt::Formula::constant(1);
  l.block[0] = static_cast<unsigned>(block);
  l.sharedBytes = rt::Formula::constant(0);
  l.args = std::move(args);
  program.steps.push_back(std::move(l));
  return success();
}

static rt::KernelArg bufferArg(const std::string &name) {
  rt::KernelArg a;
  a.kind = rt::KernelArg::Kind::Buffer;
  a.name = name;
  return a;
}

static rt::KernelArg graphArg(const std::string &name) {
  rt::KernelArg a;
  a.kind = rt::KernelArg::Kind::Graph;
  a.name = name;
  return a;
}

static rt::KernelArg intArg(const std::string &formula) {
  rt::KernelArg a;
  a.kind = rt::KernelArg::Kind::I64;
  a.integer = *rt::Formula::parse(formula);
  return a;
}

/// Follows reshapes back to the value that owns the storage.
static Value storageRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto c = dyn_cast<tensor::CastOp>(def))
      v = c.getSource();
    else
      break;
  }
  return v;
}

FailureOr<rt::Program> Lowering::run() {
  program.name = func.getSymName().str();
  program.indexBits = options.indexBits;
  if (func.getBody().getBlocks().size() != 1)
    return func.emitError("expects a function with a single block");

  // The CUDA source and the kernels' parameter lists.
  std::string source;
  llvm::raw_string_ostream os(source);
  FailureOr<std::vector<KernelSpec>> specs = emitKernels(func, os, options);
  if (failed(specs))
    return failure();
  program.source = source;
  program.kernels = {kEdgesToSlots, kSlotsToEdges};
  llvm::DenseMap<Operation *, SmallVector<const KernelSpec *>> specsOf;
  for (const KernelSpec &s : *specs) {
    program.kernels.push_back(s.name);
    specsOf[s.group].push_back(&s);
  }

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  // Values returned are produced straight into their output buffers.
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value root = storageRoot(v);
    if (!isa<BlockArgument>(root) && !reserved.count(root) &&
        inferDomain(v) != Domain::Edge)
      reserved[root] = "result" + std::to_string(i);
  }

  // Inputs; edge tensors are brought into CSR slot order.
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (isa<mlir::gnn::GraphType>(arg.getType()))
      continue;
    if (!isa<RankedTensorType>(arg.getType()))
      return func.emitError() << "argument #" << i << " has type "
                              << arg.getType()
                              << ", which the CUDA backend does not support";
    std::string name = "arg" + std::to_string(i);
    FailureOr<std::string> elements = size(arg, func);
    if (failed(elements) ||
        failed(declare(name, rt::BufferRole::Input, *elements, func)))
      return failure();
    buffer[arg] = name;
    if (inferDomain(arg) == Domain::Edge) {
      FailureOr<int64_t> width = rowElements(arg, func);
      std::string slots = name + "_slots";
      if (failed(declare(slots, rt::BufferRole::Temp, *elements, func)) ||
          failed(launch(kEdgesToSlots, "edges * " + std::to_string(*width), 256,
                        {bufferArg(slots), bufferArg(name), graphArg("csr_edge"),
                         intArg("edges"), intArg(std::to_string(*width))},
                        func)))
        return failure();
      buffer[arg] = slots;
    }
  }

  // Live ops: those the results depend on.
  llvm::SetVector<Operation *> live;
  SmallVector<Value> work(ret.getOperands().begin(), ret.getOperands().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || !live.insert(def))
      continue;
    def->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *d = operand.getDefiningOp())
          if (!def->isAncestor(d))
            work.push_back(operand);
    });
  }

  for (Operation &op : func.getBody().front()) {
    if (!live.count(&op) || isa<func::ReturnOp>(op))
      continue;
    LogicalResult r = success();
    if (isa<arith::ConstantOp, tensor::DimOp, tensor::EmptyOp, linalg::FillOp>(op)) {
      // Sizes are formulas and fills are materialised where they are read.
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(op)) {
      // Row-major data keeps its layout under any reshape: one buffer.
      FailureOr<std::string> src = use(op.getOperand(0), &op);
      if (failed(src))
        return failure();
      buffer[op.getResult(0)] = *src;
    } else if (auto mm = dyn_cast<linalg::MatmulOp>(op)) {
      auto maps = mm.getIndexingMapsArray();
      MLIRContext *ctx = op.getContext();
      AffineExpr i, j, k;
      bindDims(ctx, i, j, k);
      if (maps[0] != AffineMap::get(3, 0, {i, k}, ctx) ||
          maps[1] != AffineMap::get(3, 0, {k, j}, ctx) ||
          maps[2] != AffineMap::get(3, 0, {i, j}, ctx))
        return mm.emitOpError("has indexing maps the CUDA backend does not "
                              "support (only the default C += A B)");
      Value a = mm.getInputs()[0], b = mm.getInputs()[1], init = mm.getOutputs()[0];
      auto bt = cast<RankedTensorType>(b.getType());
      if (!bt.hasStaticShape())
        return mm.emitOpError("expects a static right-hand matrix");
      FailureOr<std::string> ab = use(a, &op), bb = use(b, &op);
      FailureOr<std::string> m = rowsFormula(a);
      if (failed(ab) || failed(bb) || failed(m))
        return failure();
      FailureOr<std::string> cb = define(mm.getResult(0), &op);
      if (failed(cb))
        return failure();
      float beta = 0.0f;
      bool zeroInit = false;
      if (auto fill = init.getDefiningOp<linalg::FillOp>())
        if (auto c = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
          if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            zeroInit = f.getValueAsDouble() == 0.0;
      if (!zeroInit) {
        FailureOr<std::string> ib = use(init, &op);
        FailureOr<std::string> n = size(init, &op);
        if (failed(ib) || failed(n))
          return failure();
        program.steps.push_back(rt::CopyStep{*ib, *cb, *rt::Formula::parse(*n)});
        beta = 1.0f;
      }
      program.steps.push_back(rt::GemmStep{
          *ab, *bb, *cb, *rt::Formula::parse(*m),
          rt::Formula::constant(bt.getDimSize(1)),
          rt::Formula::constant(bt.getDimSize(0)), false, false, 1.0f, beta});
    } else if (auto group = dyn_cast<KernelGroupOp>(op)) {
      // The group's kernels in order; outputs and scratch buffers are shared
      // between them.
      llvm::StringMap<std::string> scratch;
      for (const KernelSpec *spec : specsOf.lookup(group)) {
        std::vector<rt::KernelArg> args;
        for (const KernelParam &p : spec->params) {
          switch (p.kind) {
          case KernelParam::Kind::Input: {
            FailureOr<std::string> b = use(p.value, &op);
            if (failed(b))
              return failure();
            args.push_back(bufferArg(*b));
            break;
          }
          case KernelParam::Kind::Output: {
            auto it = buffer.find(p.value);
            FailureOr<std::string> b = it != buffer.end()
                                           ? FailureOr<std::string>(it->second)
                                           : define(p.value, &op);
            if (failed(b))
              return failure();
            args.push_back(bufferArg(*b));
            break;
          }
          case KernelParam::Kind::GraphArray:
            args.push_back(graphArg(p.graphArray));
            break;
          case KernelParam::Kind::Rows:
            args.push_back(intArg(p.formula));
            break;
          case KernelParam::Kind::Scratch: {
            auto it = scratch.find(p.scratch);
            if (it == scratch.end()) {
              std::string name = "t" + std::to_string(temps++);
              if (failed(declare(name, rt::BufferRole::Temp, p.formula, &op)))
                return failure();
              it = scratch.insert({p.scratch, name}).first;
            }
            args.push_back(bufferArg(it->second));
            break;
          }
          }
        }
        if (failed(launch(spec->name, spec->threads, spec->block,
                          std::move(args), &op)))
          return failure();
      }
    } else {
      return op.emitOpError("is not supported by the CUDA backend (expected "
                            "kernel groups, linalg.matmul, fills and reshapes "
                            "after gnn-codegen-pipeline)");
    }
    if (failed(r))
      return failure();
  }

  // Outputs that are not produced in place: copies and edge-order conversion.
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    std::string name = "result" + std::to_string(i);
    if (declared.count(name))
      continue;
    FailureOr<std::string> src = use(v, ret);
    FailureOr<std::string> elements = size(v, ret);
    if (failed(src) || failed(elements) ||
        failed(declare(name, rt::BufferRole::Output, *elements, ret)))
      return failure();
    if (inferDomain(v) == Domain::Edge) {
      FailureOr<int64_t> width = rowElements(v, ret);
      if (failed(launch(kSlotsToEdges, "edges * " + std::to_string(*width), 256,
                        {bufferArg(name), bufferArg(*src), graphArg("csr_edge"),
                         intArg("edges"), intArg(std::to_string(*width))},
                        ret)))
        return failure();
    } else {
      program.steps.push_back(rt::CopyStep{*src, name, *rt::Formula::parse(*elements)});
    }
  }
  rt::Status s = program.verify();
  if (!s.ok())
    return func.emitError() << "generated an invalid program: " << s.message();
  return program;
}

LogicalResult mlir::gnn::translateToCUDA(func::FuncOp func, llvm::raw_ostream &os,
                                         const EmitOptions &options) {
  FailureOr<std::vector<KernelSpec>> specs = emitKernels(func, os, options);
  return failure(failed(specs));
}

FailureOr<rt::Program> mlir::gnn::lowerToProgram(func::FuncOp func,
                                                 const EmitOptions &options) {
  return Lowering(func, options).run();
}
