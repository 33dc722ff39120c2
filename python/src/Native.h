//===- Native.h - the native classes of the Python package ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The classes behind `gnnc._gnnc` (bindings: gnnc_ext.cpp; PyTorch ops:
/// TorchOps.cpp): parse and verify `gnn` IR, describe a function's arguments
/// and results, differentiate it (`gnn-autodiff`), run it on the CPU
/// reference evaluator and, in builds with the CUDA runtime, build graphs on
/// the GPU and run compiled Programs. No libtorch: tensors cross as (data
/// pointer, shape, dtype) and streams as raw handles, so one build serves any
/// PyTorch; the Python side (gnnc/_core.py) owns allocation.
///
//===----------------------------------------------------------------------===//

#ifndef GNNC_PYTHON_NATIVE_H
#define GNNC_PYTHON_NATIVE_H

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNInterfaces.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/IR/GraphStatsAttr.h"
#include "gnn/Dialect/GNN/Transforms/Autodiff.h"
#include "gnn/Dialect/GNN/Transforms/Pipelines.h"
#include "gnn/Graph/HostGraph.h"
#include "gnn/InitGNN.h"
#include "gnn/Reference/Evaluator.h"
#include "gnn/Tensor/HalfFloat.h"
#include "gnn/Tools/InputGuard.h"

#ifdef GNNC_HAVE_CUDA_RUNTIME
#include "gnn/Compiler/Driver.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/Graph.h"
#include "gnn/Runtime/Training.h"
#endif

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace mlir;

namespace gnnc_py {

/// Raised for IR that does not parse, verify, differentiate or lower; the
/// message holds the located diagnostics.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A tensor crossing from Python: a contiguous row-major buffer.
struct TensorRef {
  uintptr_t data = 0;
  std::vector<int64_t> shape;
  std::string dtype; ///< "float32", "float64", "bfloat16" or "float16"
};

inline int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// `file:line:col` for a file location (the innermost one of a fused or
/// call-site location), else MLIR's form.
inline std::string formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) +
            ":" + std::to_string(file.getColumn()));
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (isa<FileLineColLoc>(inner))
        return formatLocation(inner);
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return formatLocation(site.getCallee());
  if (auto name = dyn_cast<NameLoc>(loc))
    return formatLocation(name.getChildLoc());
  std::string s;
  llvm::raw_string_ostream os(s);
  os << loc;
  return s;
}

/// Collects the diagnostics emitted while it lives, with their locations.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : context(context),
        id(context.getDiagEngine().registerHandler([this](Diagnostic &d) {
          llvm::raw_string_ostream os(text);
          if (!text.empty())
            os << "\n";
          os << formatLocation(d.getLocation()) << ": "
             << (d.getSeverity() == DiagnosticSeverity::Error     ? "error: "
                 : d.getSeverity() == DiagnosticSeverity::Warning ? "warning: "
                                                                  : "note: ")
             << d;
          for (Diagnostic &note : d.getNotes())
            os << "\n" << formatLocation(note.getLocation()) << ": note: " << note;
          return success();
        })) {}
  ~DiagnosticCollector() { context.getDiagEngine().eraseHandler(id); }

  /// Throws a CompileError with what was collected, or `fallback`.
  [[noreturn]] void raise(const std::string &fallback) {
    throw CompileError(text.empty() ? fallback : text);
  }

private:
  MLIRContext &context;
  std::string text;
  DiagnosticEngine::HandlerID id;
};

/// Runs ::gnn::precheckSource on the main buffer of `sourceMgr` and returns
/// whether it passed; its errors (`name:line:col: error: ...` with the line,
/// or an excerpt of a long one, and a caret) are collected into `reason`
/// through the SourceMgr's handler: precheckSource writes nothing to stderr.
inline bool precheck(llvm::SourceMgr &sourceMgr, std::string &reason) {
  sourceMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *context) {
        std::string &out = *static_cast<std::string *>(context);
        llvm::raw_string_ostream os(out);
        d.print(nullptr, os, /*ShowColors=*/false);
      },
      &reason);
  bool ok = ::gnn::precheckSource(sourceMgr);
  sourceMgr.setDiagHandler(nullptr, nullptr);
  while (!reason.empty() && reason.back() == '\n')
    reason.pop_back();
  return ok;
}

/// What one argument or result of a function is.
inline nb::dict describe(Type type, const std::string &domain) {
  nb::dict d;
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (auto g = dyn_cast<mlir::gnn::GraphType>(type)) {
    d["kind"] = "graph";
    d["bipartite"] = g.getBipartite();
    d["typed"] = g.getTyped();
    return d;
  }
  std::vector<int64_t> shape;
  for (int64_t s : tensor.getShape())
    shape.push_back(ShapedType::isDynamic(s) ? -1 : s);
  Type element = tensor.getElementType();
  d["kind"] = domain;
  d["shape"] = shape;
  d["dtype"] = element.isF32()    ? "float32"
               : element.isF64()  ? "float64"
               : element.isBF16() ? "bfloat16"
               : element.isF16()  ? "float16"
                                  : "other";
  return d;
}

/// A parsed, verified module: the owner of its context.
class Module {
public:
  static std::unique_ptr<Module> parse(const std::string &source,
                                       const std::string &name) {
    auto m = std::unique_ptr<Module>(new Module());
    DiagnosticCollector diags(*m->context);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
    // Input that would crash upstream parsers is refused first, with the
    // pre-check's located reason; deep nesting is parsed on a large stack
    // (the tools do the same).
    std::string refusal;
    if (!precheck(*sourceMgr, refusal))
      throw CompileError(refusal.empty()
                             ? name + ": the input was refused before parsing"
                             : refusal);
    OwningOpRef<ModuleOp> module;
    llvm::thread parser(std::optional<unsigned>(::gnn::kToolStackBytes), [&] {
      module = parseSourceFile<ModuleOp>(*sourceMgr, m->context.get());
    });
    parser.join();
    if (!module)
      diags.raise(name + ": the IR does not parse or verify");
    m->module = std::move(module);
    m->name = name;
    return m;
  }

  std::vector<std::string> functions() const {
    std::vector<std::string> names;
    for (auto f : module->getOps<func::FuncOp>())
      if (!f.isExternal() && !f.isPrivate())
        names.push_back(f.getSymName().str());
    return names;
  }

  func::FuncOp lookup(const std::string &function) const {
    auto f = module->lookupSymbol<func::FuncOp>(function);
    if (!f || f.isExternal())
      throw CompileError(name + ": no function '" + function +
                         "' with a body (functions: " + join(functions()) +
                         ")");
    return f;
  }

  /// {"args": [...], "results": [...]}: kind graph/node/edge/dense, shape
  /// (-1 dynamic), dtype. Checks what the package can bind: exactly one
  /// graph argument first, float tensors otherwise, a dynamic size only in
  /// front, results of a known domain.
  nb::dict signature(const std::string &function) const {
    func::FuncOp f = lookup(function);
    DiagnosticCollector diags(*context);
    nb::list args, results;
    for (auto [i, arg] : llvm::enumerate(f.getArguments())) {
      Type t = arg.getType();
      if (isa<mlir::gnn::GraphType>(t)) {
        if (i != 0)
          fail(f, "the !gnn.graph must be the first argument (found it at "
                  "position " + std::to_string(i) + ")");
        args.append(describe(t, "graph"));
        continue;
      }
      if (i == 0)
        fail(f, "the first argument must be the !gnn.graph");
      auto tensor = dyn_cast<RankedTensorType>(t);
      if (!tensor || !mlir::gnn::isGNNFloatType(tensor.getElementType()))
        fail(f, "argument #" + std::to_string(i) +
                    " must be a ranked f32, f64, bf16 or f16 tensor, found " +
                    str(t));
      args.append(describe(t, kindOf(f, arg, tensor, domainOf(arg), i, "argument")));
    }
    if (f.getNumArguments() == 0)
      fail(f, "the first argument must be the !gnn.graph");
    auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      auto tensor = dyn_cast<RankedTensorType>(v.getType());
      if (!tensor)
        fail(f, "result #" + std::to_string(i) + " must be a tensor, found " +
                    str(v.getType()));
      auto hint = resultKinds.find(function);
      if (hint != resultKinds.end() && i < hint->second.size() &&
          domainOf(v) == mlir::gnn::Domain::Unknown) {
        results.append(describe(tensor, hint->second[i]));
        continue;
      }
      results.append(
          describe(tensor, kindOf(f, v, tensor, domainOf(v), i, "result")));
    }
    // The relation count R of the `relation` gathers and reduces (their
    // node tensor's dimension 1, static): the fewest, as the CUDA
    // Program's check takes it; 0 when none reads edge types.
    int64_t relations = 0;
    f.walk([&](Operation *op) {
      RankedTensorType rows;
      if (auto g = dyn_cast<mlir::gnn::GatherOp>(op); g && g.getRelation())
        rows = cast<RankedTensorType>(g.getInput().getType());
      else if (auto r = dyn_cast<mlir::gnn::ReduceOp>(op); r && r.getRelation())
        rows = cast<RankedTensorType>(r.getResult().getType());
      if (rows && rows.getRank() > 1 && !rows.isDynamicDim(1) &&
          (!relations || rows.getDimSize(1) < relations))
        relations = rows.getDimSize(1);
    });
    nb::dict d;
    d["args"] = args;
    d["results"] = results;
    d["relations"] = relations;
    return d;
  }

  /// Differentiates `function` for training (differentiateForTraining: the
  /// arguments the source marks {gnn.differentiable}, else every float
  /// tensor argument; @f_fwd outputs only the residuals that are not its
  /// own arguments or results, the caller keeps those tensors). Returns
  /// {"forward", "backward", "residuals": [("arg", i) | ("out", k)],
  /// "grads": [arg i]}: the backward's residual arguments come from the
  /// forward's argument i or its result k (f's own results first), in
  /// order; its results are the gradients of the listed arguments.
  nb::dict differentiate(const std::string &function) {
    std::string fwdName = function + "_fwd", bwdName = function + "_bwd";
    func::FuncOp f = lookup(function);
    DiagnosticCollector diags(*context);
    if (!training.count(function)) {
      FailureOr<mlir::gnn::TrainingFunctions> t =
          mlir::gnn::differentiateForTraining(f);
      if (failed(t))
        diags.raise("'" + function + "' cannot be differentiated");
      training[function] = *t;
      // A gradient has its argument's domain, even where the backward's
      // IR does not show it (the zeros of an argument that only feeds a
      // comparison).
      std::vector<std::string> kinds;
      for (unsigned i : t->gradients)
        kinds.push_back(argumentKind(f, i));
      resultKinds[bwdName] = kinds;
    }
    const mlir::gnn::TrainingFunctions &t = training[function];
    // Residuals that are arguments or results: the caller saves its own
    // tensors (no second output, no copy).
    std::vector<std::pair<std::string, int64_t>> residuals;
    for (mlir::gnn::ResidualSource r : t.residuals) {
      bool arg = r.kind == mlir::gnn::ResidualSource::Kind::Argument;
      residuals.push_back({arg ? "arg" : "out", int64_t(r.index)});
    }
    nb::dict d;
    d["forward"] = fwdName;
    d["backward"] = bwdName;
    d["residuals"] = residuals;
    d["grads"] = std::vector<int64_t>(t.gradients.begin(), t.gradients.end());
    return d;
  }

  /// The kernel groups gnn-codegen-pipeline forms for each of `names`, and
  /// the schedules it picks for graphs of `stats` (GraphStats::toOption's
  /// form; empty: gnn-select-schedules' default statistics), run on a copy
  /// of the module: per function {"function", "groups": [{"kernel",
  /// "family", "schedule", "ops"}], "gemms"} (GEMMs run through cuBLAS,
  /// outside the groups).
  nb::list explain(const std::vector<std::string> &names,
                   const std::string &stats) {
    for (const std::string &n : names)
      lookup(n);
    DiagnosticCollector diags(*context);
    OwningOpRef<ModuleOp> copy = module->clone();
    if (!stats.empty()) {
      ::gnn::GraphStats s;
      std::string err = ::gnn::GraphStats::parseOption(stats, s);
      if (!err.empty())
        throw std::invalid_argument("gnnc.explain: statistics '" + stats +
                                    "': " + err);
      (*copy)->setAttr(mlir::gnn::kGraphStatsAttr,
                       mlir::gnn::graphStatsAttr(context.get(), s));
    }
    PassManager pm(context.get());
    mlir::gnn::buildCodegenPipeline(pm, mlir::gnn::CodegenPipelineOptions());
    if (failed(pm.run(*copy)))
      diags.raise("'" + join(names) + "' does not form kernel groups");
    nb::list out;
    for (const std::string &n : names) {
      auto f = copy->lookupSymbol<func::FuncOp>(n);
      nb::list groups;
      int64_t gemms = 0;
      for (Operation &op : f.getBody().front()) {
        if (isa<linalg::MatmulOp>(op)) {
          ++gemms;
          continue;
        }
        auto g = dyn_cast<mlir::gnn::KernelGroupOp>(op);
        if (!g)
          continue;
        std::vector<std::string> ops;
        // The ops that compute (not the sizes, empties and fills around
        // them).
        for (Operation &inner : g.getBody().front().without_terminator())
          if (!isa<linalg::FillOp>(inner) &&
              !isa<tensor::TensorDialect, arith::ArithDialect>(
                  inner.getDialect()))
            ops.push_back(opSummary(inner));
        std::string schedule;
        if (mlir::gnn::ScheduleAttr a = g.getScheduleAttr()) {
          llvm::raw_string_ostream os(schedule);
          Attribute(a).print(os);
        }
        nb::dict d;
        d["kernel"] = g.getKernel().str();
        d["family"] = mlir::gnn::stringifyGroupFamily(g.getFamily()).str();
        d["schedule"] = schedule;
        d["ops"] = ops;
        groups.append(d);
      }
      nb::dict d;
      d["function"] = n;
      d["groups"] = groups;
      d["gemms"] = gemms;
      out.append(d);
    }
    return out;
  }

  /// What differentiate() made of `function`.
  const mlir::gnn::TrainingFunctions &trainingOf(const std::string &function) {
    auto it = training.find(function);
    if (it == training.end())
      throw std::invalid_argument("internal: '" + function +
                                  "' was not differentiated");
    return it->second;
  }

  /// The module's text; with `names`, values named by gnnc.ir (NameLoc)
  /// print as `%name`.
  std::string text(bool names = false) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    OpPrintingFlags flags;
    if (names)
      flags.printNameLocAsPrefix();
    module->print(os, flags);
    return s;
  }

  /// Runs `function` on the reference evaluator: reads `inputs` (one per
  /// tensor argument), writes `outputs` (one per result, sized by the
  /// caller from signature()).
  void runReference(const std::string &function, const ::gnn::HostGraph &graph,
                    const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs) {
    nb::gil_scoped_release release;
    evaluate(function, graph, inputs, outputs);
  }

  /// runReference without touching Python (the caller need not hold the
  /// GIL: the PyTorch ops call it).
  void evaluate(const std::string &function, const ::gnn::HostGraph &graph,
                const std::vector<TensorRef> &inputs,
                const std::vector<TensorRef> &outputs) {
    func::FuncOp f = lookup(function);
    DiagnosticCollector diags(*context);
    if (inputs.size() + 1 != f.getNumArguments())
      throw std::invalid_argument(
          function + " takes " + std::to_string(f.getNumArguments() - 1) +
          " tensors, got " + std::to_string(inputs.size()));
    std::vector<::gnn::Tensor> in;
    for (const TensorRef &r : inputs) {
      ::gnn::Tensor t;
      t.shape = r.shape;
      int64_t n = numElements(r.shape);
      if (r.dtype == "float32") {
        // (converted as it is copied: no zero fill first)
        const float *p = reinterpret_cast<const float *>(r.data);
        t.data.assign(p, p + n);
      } else if (r.dtype == "bfloat16" || r.dtype == "float16") {
        const uint16_t *p = reinterpret_cast<const uint16_t *>(r.data);
        ::gnn::HalfKind kind = r.dtype == "bfloat16" ? ::gnn::HalfKind::BF16
                                                     : ::gnn::HalfKind::F16;
        t.data.reserve(n);
        for (int64_t k = 0; k < n; ++k)
          t.data.push_back(::gnn::halfValue(p[k], kind));
      } else if (r.dtype == "float64") {
        const double *p = reinterpret_cast<const double *>(r.data);
        t.data.assign(p, p + n);
      } else {
        throw std::invalid_argument("unsupported dtype " + r.dtype);
      }
      in.push_back(std::move(t));
    }
    FailureOr<std::vector<::gnn::Tensor>> out =
        // At the element type: the results go to PyTorch tensors of it,
        // and a backward reads its forward's residuals back from them.
        ::gnn::evaluateReference(f, graph, std::move(in),
                                 ::gnn::Storage::ElementType);
    if (failed(out))
      diags.raise("the reference evaluation of '" + function + "' failed");
    if (out->size() != outputs.size())
      throw std::invalid_argument("internal: " + std::to_string(out->size()) +
                                  " results, " +
                                  std::to_string(outputs.size()) + " outputs");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const ::gnn::Tensor &t = (*out)[i];
      const TensorRef &r = outputs[i];
      if (t.shape != r.shape)
        throw std::invalid_argument(
            "internal: result #" + std::to_string(i) + " has shape " +
            t.shapeString() + ", the output " +
            ::gnn::Tensor::shapeString(r.shape));
      if (r.dtype == "float32") {
        float *p = reinterpret_cast<float *>(r.data);
        for (size_t k = 0; k < t.data.size(); ++k)
          p[k] = static_cast<float>(t.data[k]);
      } else if (r.dtype == "bfloat16" || r.dtype == "float16") {
        uint16_t *p = reinterpret_cast<uint16_t *>(r.data);
        ::gnn::HalfKind kind = r.dtype == "bfloat16" ? ::gnn::HalfKind::BF16
                                                     : ::gnn::HalfKind::F16;
        for (size_t k = 0; k < t.data.size(); ++k)
          p[k] = ::gnn::halfBits(t.data[k], kind);
      } else {
        std::memcpy(reinterpret_cast<void *>(r.data), t.data.data(),
                    t.data.size() * sizeof(double));
      }
    }
  }

  ModuleOp op() const { return *module; }
  MLIRContext &contextRef() { return *context; }

  /// An empty module named `name`, for FunctionBuilder (IRBuilder.cpp) to
  /// build into.
  static std::unique_ptr<Module> empty(const std::string &name) {
    auto m = std::unique_ptr<Module>(new Module());
    m->module = ModuleOp::create(UnknownLoc::get(m->context.get()));
    m->name = name;
    return m;
  }

private:
  Module() : context(std::make_unique<MLIRContext>(registry())) {
    context->loadAllAvailableDialects();
    // A diagnostic names the op by its source location; MLIR's generic
    // dump of the op ("see current operation") is noise in a user's error.
    context->printOpOnDiagnostic(false);
  }

  static DialectRegistry &registry() {
    static DialectRegistry *r = [] {
      auto *reg = new DialectRegistry();
      ::gnn::registerGNNDialects(*reg);
      mlir::gnn::registerVJPModels(*reg);
      return reg;
    }();
    return *r;
  }

  static std::string str(Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t.print(os);
    return s;
  }
  /// `op` as its custom form reads up to its first operand: the name and
  /// its kind (`gnn.spmm sum`, `gnn.sddmm add`, `linalg.generic`).
  static std::string opSummary(Operation &op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op.print(os, OpPrintingFlags().skipRegions());
    std::string name = op.getName().getStringRef().str();
    size_t at = text.find(name);
    if (at == std::string::npos)
      return name;
    std::string rest = text.substr(at + name.size());
    std::string summary = name;
    size_t pos = 0;
    while (pos < rest.size()) {
      while (pos < rest.size() && rest[pos] == ' ')
        ++pos;
      size_t end = rest.find_first_of(" ,{(<[:", pos);
      std::string word = rest.substr(pos, end - pos);
      if (word.empty() || !std::isalpha(static_cast<unsigned char>(word[0])))
        break;
      summary += " " + word;
      if (end == std::string::npos || rest[end] != ' ')
        break;
      pos = end;
    }
    return summary;
  }

  static std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (const std::string &x : v)
      s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "none" : s;
  }

  [[noreturn]] void fail(func::FuncOp f, const std::string &message) const {
    fail(f, f.getLoc(), message);
  }

  /// At `loc` (a value's: gnnc.ir's Python line), or the function's where
  /// the value has none (text IR without locations).
  [[noreturn]] void fail(func::FuncOp f, Location loc, const std::string &message) const {
    if (isa<UnknownLoc>(loc))
      loc = f.getLoc();
    throw CompileError(formatLocation(loc) + ": error: @" + f.getSymName().str() + ": " +
                       message);
  }

  static mlir::gnn::Domain domainOf(Value v) { return mlir::gnn::inferDomain(v); }

  std::string kindOf(func::FuncOp f, Value v, RankedTensorType t, mlir::gnn::Domain domain,
                     size_t index, const char *what) const {
    ArrayRef<int64_t> shape = t.getShape();
    for (size_t d = 1; d < shape.size(); ++d)
      if (ShapedType::isDynamic(shape[d]))
        fail(f, v.getLoc(), std::string(what) + " #" + std::to_string(index) +
                    ": only the leading dimension may be dynamic");
    if (shape.empty() || !ShapedType::isDynamic(shape[0]))
      return "dense";
    if (domain == mlir::gnn::Domain::Edge)
      return "edge";
    if (domain == mlir::gnn::Domain::Node)
      return "node";
    if (domain == mlir::gnn::Domain::Src)
      return "src";
    if (domain == mlir::gnn::Domain::Dst)
      return "dst";
    fail(f, v.getLoc(), std::string(what) + " #" + std::to_string(index) +
                ": its dynamic size is neither the nodes nor the edges; "
                "mark it with {gnn.domain = \"node\"}, \"edge\", \"src\" "
                "or \"dst\"");
  }

  /// node, edge or dense for argument `i` of `f` (a tensor).
  std::string argumentKind(func::FuncOp f, int64_t i) const {
    auto t = cast<RankedTensorType>(f.getArgument(i).getType());
    return kindOf(f, f.getArgument(i), t, domainOf(f.getArgument(i)), i, "argument");
  }

  std::unique_ptr<MLIRContext> context;
  mutable OwningOpRef<ModuleOp> module;
  /// Result kinds of backward functions, from their arguments' domains.
  std::map<std::string, std::vector<std::string>> resultKinds;
  std::string name;
  /// The differentiated functions, by the function they differentiate.
  std::map<std::string, mlir::gnn::TrainingFunctions> training;
};

/// A host graph from int64 source and target arrays.
inline std::unique_ptr<::gnn::HostGraph>
makeHostGraph(uintptr_t src, uintptr_t dst, int64_t numEdges, int64_t numNodes,
              int64_t numSrc = -1, int64_t numDst = -1, bool typed = false,
              uintptr_t types = 0) {
  if (numNodes < 0 || numEdges < 0)
    throw std::invalid_argument("negative node or edge count");
  if ((numSrc >= 0) != (numDst >= 0) ||
      (numSrc >= 0 && std::max(numSrc, numDst) != numNodes))
    throw std::invalid_argument("a bipartite graph's sides must both be given, "
                                "the larger one the node count");
  std::string tooBig = ::gnn::checkGraphSize("the graph", numNodes, numEdges);
  if (!tooBig.empty())
    throw std::invalid_argument(tooBig);
  auto g = std::make_unique<::gnn::HostGraph>();
  g->name = "tensor";
  g->numNodes = numNodes;
  g->numSrc = numSrc;
  g->numDst = numDst;
  const int64_t *s = reinterpret_cast<const int64_t *>(src);
  const int64_t *d = reinterpret_cast<const int64_t *>(dst);
  g->src.assign(s, s + numEdges);
  g->dst.assign(d, d + numEdges);
  if (typed) {
    // A typed graph's relation ids (int64, one per edge; no pointer
    // needed without edges).
    if (numEdges && !types)
      throw std::invalid_argument("a typed graph's edge types are missing");
    const int64_t *t = reinterpret_cast<const int64_t *>(types);
    if (numEdges)
      g->edgeTypes.assign(t, t + numEdges);
    g->typedEmpty = numEdges == 0;
  }
  std::string err = g->validate();
  if (!err.empty())
    throw std::invalid_argument(err);
  return g;
}

#ifdef GNNC_HAVE_CUDA_RUNTIME
namespace rt = ::gnn::runtime;

template <typename T> inline T check(rt::StatusOr<T> v) {
  if (!v.ok())
    throw std::runtime_error(v.message());
  return std::move(*v);
}
inline void check(const rt::Status &s) {
  if (!s.ok())
    throw std::runtime_error(s.message());
}

/// A graph built on the GPU from device edge arrays; `dstSorted`: the
/// caller knows the edges to be sorted by destination (no CSR sort; checked,
/// GraphBuildOptions::dstSorted); `numSrc`, `numDst`: a bipartite graph's
/// sides, checked in the build (-1: the node count).
class DeviceGraph {
public:
  DeviceGraph(uintptr_t src, uintptr_t dst, int64_t numEdges, int64_t numNodes,
              uintptr_t stream, bool dstSorted, int64_t numSrc, int64_t numDst) {
    check(rt::CudaDriver::get());
    nb::gil_scoped_release release;
    rt::GraphBuildOptions options;
    options.dstSorted = dstSorted;
    options.numSrc = numSrc;
    options.numDst = numDst;
    graph = check(rt::Graph::build(
        reinterpret_cast<const void *>(src), reinterpret_cast<const void *>(dst),
        numEdges, numNodes, rt::IndexType::Int64, nullptr,
        reinterpret_cast<cudaStream_t>(stream), options));
  }
  /// Makes the graph typed: `types` (device, int64, one relation id per
  /// edge in edge-list order; checked).
  void setEdgeTypes(uintptr_t types, uintptr_t stream) {
    nb::gil_scoped_release release;
    check(graph->setEdgeTypes(reinterpret_cast<const void *>(types),
                              rt::IndexType::Int64,
                              reinterpret_cast<cudaStream_t>(stream)));
  }
  nb::dict statistics() const {
    const ::gnn::GraphStats &s = graph->statistics();
    nb::dict d;
    d["nodes"] = s.nodes;
    d["edges"] = s.edges;
    d["mean_degree"] = s.meanDegree();
    d["max_in_degree"] = s.maxInDegree;
    d["max_out_degree"] = s.maxOutDegree;
    d["p50"] = s.p50;
    d["p90"] = s.p90;
    d["p99"] = s.p99;
    d["index_bits"] = graph->indexBits();
    d["csr_order"] = s.csrOrder;
    d["relations"] = graph->numRelations();
    // What the default schedules depend on (equal keys, equal kernels), the
    // statistics themselves (what the compiler takes), and their text form
    // for people (`gnn-opt ... stats=`; gnnc never parses it back).
    d["schedule_key"] = ::gnn::scheduleKey(s);
    d["stats"] = nb::cast(s);
    d["stats_option"] = s.toOption();
    return d;
  }
  std::unique_ptr<rt::Graph> graph;
};

/// What decides the generated code: the graph's statistics and the index
/// width.
inline mlir::gnn::CompileOptions compileOptions(const ::gnn::GraphStats &stats,
                                                int indexBits) {
  mlir::gnn::CompileOptions options;
  if (std::string bad = stats.check(); !bad.empty())
    throw nb::value_error(("gnnc: graph statistics: " + bad).c_str());
  options.stats = stats;
  options.indexBits = indexBits;
  return options;
}

inline uintptr_t checkedWorkspace(uintptr_t workspace) {
  if (workspace % 256)
    throw std::invalid_argument(
        "internal: the workspace is not 256-byte aligned");
  return workspace;
}

/// Where each of an Executable's bound buffers (boundNames) takes its
/// pointer from: a caller's argument lists (inputs, outputs, ...) laid end
/// to end, mapped by name once when the variant is loaded, so that a call
/// only copies pointers (Executable::runBound).
class BoundOrder {
public:
  BoundOrder() = default;
  /// `bound`: the Executable's boundNames, each renamed by `rename` (a
  /// training backward's buffer to the step's name) where given; `lists`:
  /// the names of each argument list, in the order enqueue takes them.
  BoundOrder(const std::vector<std::string> &bound,
             std::vector<const std::vector<std::string> *> lists,
             const std::map<std::string, std::string> *rename = nullptr) {
    for (const std::vector<std::string> *l : lists)
      sizes.push_back(l->size());
    for (const std::string &name : bound) {
      std::string want = name;
      if (rename) {
        auto r = rename->find(name);
        if (r == rename->end())
          throw std::invalid_argument("internal: buffer '" + name +
                                      "' has no name in the training step");
        want = r->second;
      }
      bool found = false;
      for (size_t l = 0; l < lists.size() && !found; ++l)
        for (size_t i = 0; i < lists[l]->size() && !found; ++i)
          if ((*lists[l])[i] == want) {
            from.push_back({l, i});
            found = true;
          }
      if (!found)
        throw std::invalid_argument("internal: buffer '" + want +
                                    "' is bound by no argument");
    }
  }
  /// The pointers of the bound buffers, from `lists` (as many lists, each
  /// of as many pointers, as the construction named).
  std::vector<void *>
  operator()(std::initializer_list<const std::vector<uintptr_t> *> lists) const {
    if (lists.size() != sizes.size())
      throw std::invalid_argument("internal: wrong argument lists");
    std::vector<const std::vector<uintptr_t> *> l(lists);
    for (size_t i = 0; i < l.size(); ++i)
      if (l[i]->size() != sizes[i])
        throw std::invalid_argument(
            "internal: " + std::to_string(l[i]->size()) +
            " pointers where the program binds " + std::to_string(sizes[i]));
    std::vector<void *> bound;
    bound.reserve(from.size());
    for (auto [list, i] : from)
      bound.push_back(reinterpret_cast<void *>((*l[list])[i]));
    return bound;
  }

private:
  std::vector<size_t> sizes;
  std::vector<std::pair<size_t, size_t>> from;
};

/// Runs `exe` on `bound` (BoundOrder's) on the caller's stream and
/// workspace (256-byte aligned), with the change check `guard` (null: none)
/// in the run.
inline void enqueue(rt::Executable &exe, const rt::Graph &graph,
                    const std::vector<void *> &bound, uintptr_t workspace,
                    uintptr_t stream, const rt::RunGuard *guard) {
  void *ws = reinterpret_cast<void *>(checkedWorkspace(workspace));
  auto s = reinterpret_cast<cudaStream_t>(stream);
  check(exe.runBound(graph, bound, s, ws, guard));
  // The graph is freed in the default stream's order: after this run's
  // work on another stream (rt::Graph::usedOn).
  check(graph.usedOn(s));
}

/// One function compiled for a graph's statistics: a loaded Executable.
class CudaFunction {
public:
  CudaFunction(Module &module, const std::string &function,
               const ::gnn::GraphStats &stats, int indexBits) {
    func::FuncOp f = module.lookup(function);
    mlir::gnn::CompileOptions options = compileOptions(stats, indexBits);
    {
      // Lowered in a copy: the module keeps serving the reference evaluator
      // and other graphs.
      DiagnosticCollector diags(*f.getContext());
      FailureOr<rt::Program> p =
          mlir::gnn::compileFunction(module.op(), f, options);
      if (failed(p))
        diags.raise("'" + function + "' does not compile for the GPU");
      program = std::move(*p);
    }
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (!isa<mlir::gnn::GraphType>(f.getArgument(i).getType()))
        inputNames.push_back("arg" + std::to_string(i));
    for (const rt::BufferDecl &b : program.buffers)
      if (b.role == rt::BufferRole::Output)
        outputNames.push_back(b.name);
    nb::gil_scoped_release release;
    exe = check(rt::Executable::create(program));
    order = BoundOrder(exe->boundNames(), {&inputNames, &outputNames});
  }

  /// Bytes of the temporaries' workspace on `graph` (the caller allocates
  /// it: PyTorch's caching allocator, no second pool).
  size_t workspaceBytesOn(const rt::Graph &graph) const {
    return check(exe->workspaceBytes(graph));
  }
  /// Runs on `stream` (asynchronously) with `workspace` (at least
  /// workspaceBytesOn, 256-byte aligned), without touching Python (the
  /// PyTorch ops call it). One CudaFunction may run on several streams at
  /// once.
  void enqueueRun(const rt::Graph &graph, const std::vector<uintptr_t> &inputs,
                  const std::vector<uintptr_t> &outputs, uintptr_t workspace,
                  uintptr_t stream, const rt::RunGuard *guard = nullptr) {
    enqueue(*exe, graph, order({&inputs, &outputs}), workspace, stream, guard);
  }

  std::string source() const { return program.source(); }
  std::string json() const { return program.toJson(); }

private:
  rt::Program program;
  std::unique_ptr<rt::Executable> exe;
  std::vector<std::string> inputNames, outputNames;
  BoundOrder order;
};

/// The training step of a differentiated function compiled for a graph's
/// statistics: the runtime's training entry (TrainingExecutable). The
/// backward reads the residuals in the tensors the forward wrote and the
/// caller keeps (its arguments and outputs), on the device, as they are.
class CudaTraining {
public:
  CudaTraining(Module &module, const std::string &function,
               const ::gnn::GraphStats &stats, int indexBits) {
    const mlir::gnn::TrainingFunctions &t = module.trainingOf(function);
    func::FuncOp fwd = t.forward;
    mlir::gnn::CompileOptions options = compileOptions(stats, indexBits);
    {
      DiagnosticCollector diags(*fwd.getContext());
      FailureOr<rt::TrainingProgram> p = mlir::gnn::compileTrainingProgram(
          module.op(), t, options, options);
      if (failed(p))
        diags.raise("the training step of '" + function +
                    "' does not compile for the GPU");
      program = std::move(*p);
    }
    for (unsigned i = 0; i < fwd.getNumArguments(); ++i)
      if (!isa<mlir::gnn::GraphType>(fwd.getArgument(i).getType()))
        inputNames.push_back("arg" + std::to_string(i));
    for (unsigned k = 0; k < fwd.getNumResults(); ++k)
      outputNames.push_back("result" + std::to_string(k));
    for (unsigned k = 0; k < t.numResults; ++k)
      outputGradNames.push_back("dresult" + std::to_string(k));
    for (unsigned i : t.gradients)
      gradNames.push_back("grad" + std::to_string(i));
    nb::gil_scoped_release release;
    exe = check(rt::TrainingExecutable::create(program));
    forwardOrder = BoundOrder(exe->forwardExecutable().boundNames(),
                              {&inputNames, &outputNames});
    backwardOrder = BoundOrder(
        exe->backwardExecutable().boundNames(),
        {&inputNames, &outputNames, &outputGradNames, &gradNames},
        &exe->program().backwardBindings);
  }

  size_t forwardWorkspaceBytesOn(const rt::Graph &graph) const {
    return check(exe->forwardWorkspaceBytes(graph));
  }
  size_t backwardWorkspaceBytesOn(const rt::Graph &graph) const {
    return check(exe->backwardWorkspaceBytes(graph));
  }
  /// The forward: reads the inputs (f's tensor arguments), writes the
  /// outputs (f's results, then the residuals of their own). Touches no
  /// Python (the PyTorch ops call it).
  void enqueueForward(const rt::Graph &graph,
                      const std::vector<uintptr_t> &inputs,
                      const std::vector<uintptr_t> &outputs, uintptr_t workspace,
                      uintptr_t stream, const rt::RunGuard *guard = nullptr) {
    enqueue(exe->forwardExecutable(), graph, forwardOrder({&inputs, &outputs}),
            workspace, stream, guard);
  }

  /// The backward after the forward: the inputs and outputs as the forward
  /// read and left them, the gradients of f's results; writes the
  /// gradients of the differentiated arguments. Touches no Python.
  void enqueueBackward(const rt::Graph &graph,
                       const std::vector<uintptr_t> &inputs,
                       const std::vector<uintptr_t> &outputs,
                       const std::vector<uintptr_t> &outputGrads,
                       const std::vector<uintptr_t> &grads, uintptr_t workspace,
                       uintptr_t stream, const rt::RunGuard *guard = nullptr) {
    enqueue(exe->backwardExecutable(), graph,
            backwardOrder({&inputs, &outputs, &outputGrads, &grads}), workspace,
            stream, guard);
  }

private:
  rt::TrainingProgram program;
  std::unique_ptr<rt::TrainingExecutable> exe;
  std::vector<std::string> inputNames, outputNames, outputGradNames, gradNames;
  BoundOrder forwardOrder, backwardOrder;
};
#endif

} // namespace gnnc_py

#endif // GNNC_PYTHON_NATIVE_H
