//===- CudaBackend.cpp - gnn-run's cuda backend ---------------------------===//
//
// Part of gnnc. Lowers a function (or a training step's two) to Programs,
// runs them with the runtime and checks them against the reference:
// |gnnc - ref| <= tol * (1 + |ref|) elementwise against the float64
// reference, tol = 1e-4 for f32 results, 1e-9 for f64, 1e-2 for bf16 and
// 2e-3 for f16 ones (docs/Semantics.md, "Numbers"), a result computed
// through a less precise type held to that type's (toleranceTypes). Before
// allocating anything on the device it checks that the graph, the buffers
// and the workspace fit in the free device memory.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "gnn/Compiler/Driver.h"
#include "gnn/Compiler/Tuner.h"
#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/DeviceBytes.h"
#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/Jit.h"
#include "gnn/Runtime/MemoryPlan.h"
#include "gnn/Runtime/Timing.h"
#include "gnn/Runtime/Training.h"
#include "gnn/Tensor/HalfFloat.h"

#include "llvm/Support/raw_ostream.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

using namespace gnn;
namespace rt = gnn::runtime;

/// The documented tolerances of the cuda backend against the reference, per
/// result type (docs/Semantics.md), and their text.
static double toleranceOf(rt::DType t) {
  switch (t) {
  case rt::DType::F64:
    return 1e-9;
  case rt::DType::BF16:
    return 1e-2;
  case rt::DType::F16:
    return 2e-3;
  default:
    return 1e-4;
  }
}
static const char *toleranceText(rt::DType t) {
  switch (t) {
  case rt::DType::F64:
    return "|gnnc - ref| <= 1e-9 * (1 + |ref|)";
  case rt::DType::BF16:
    return "|gnnc - ref| <= 1e-2 * (1 + |ref|)";
  case rt::DType::F16:
    return "|gnnc - ref| <= 2e-3 * (1 + |ref|)";
  default:
    return "|gnnc - ref| <= 1e-4 * (1 + |ref|)";
  }
}

/// Of two types, the one with the looser tolerance.
static rt::DType looser(rt::DType a, rt::DType b) {
  return toleranceOf(a) >= toleranceOf(b) ? a : b;
}

/// The type whose tolerance each result of `func` is checked with: the
/// least precise float type among the values it is computed from, its own
/// included (and the types inside linalg bodies): a float32 result
/// computed through bfloat16 values (a float32 parameter's gradient in a
/// function of bfloat16 features) carries bfloat16's rounding, and is held
/// to bfloat16's tolerance, not float32's.
static std::vector<rt::DType> toleranceTypes(mlir::func::FuncOp func) {
  auto dtypeOf = [](mlir::Type t, rt::DType &worst) {
    mlir::Type e = mlir::getElementTypeOrSelf(t);
    if (e.isBF16())
      worst = looser(worst, rt::DType::BF16);
    else if (e.isF16())
      worst = looser(worst, rt::DType::F16);
    else if (e.isF32())
      worst = looser(worst, rt::DType::F32);
  };
  std::vector<rt::DType> types;
  mlir::Operation *ret = func.getBody().front().getTerminator();
  for (mlir::Value v : ret->getOperands()) {
    rt::DType worst = rt::DType::F64;
    llvm::SmallVector<mlir::Value> work{v};
    llvm::DenseSet<mlir::Value> seen{v};
    while (!work.empty()) {
      mlir::Value u = work.pop_back_val();
      dtypeOf(u.getType(), worst);
      mlir::Operation *def = u.getDefiningOp();
      if (!def)
        continue;
      def->walk([&](mlir::Operation *op) {
        for (mlir::Value o : op->getOperands())
          if (seen.insert(o).second)
            work.push_back(o);
        for (mlir::Type t : op->getResultTypes())
          dtypeOf(t, worst);
      });
    }
    types.push_back(worst);
  }
  return types;
}

/// `toleranceTypes` as JSON: the type names, in result order.
static llvm::json::Array toleranceJson(const std::vector<rt::DType> &types) {
  llvm::json::Array a;
  for (rt::DType t : types)
    a.push_back(rt::dtypeName(t));
  return a;
}

static int fail(const std::string &message) {
  llvm::errs() << "gnn-run: error: " << message << "\n";
  return 1;
}

/// Returns 1 from the enclosing function when the expression (an exit code)
/// is not 0.
#define GNN_RETURN_IF_FAILED(...)                                              \
  do {                                                                         \
    if (int _gnn_rc = (__VA_ARGS__))                                           \
      return _gnn_rc;                                                          \
  } while (false)

static llvm::cl::opt<int64_t> maxChunks(
    "max-chunks", llvm::cl::init(::mlir::gnn::kDefaultMaxChunks),
    llvm::cl::desc("the most chunks (blocks and partial results) of a split "
                   "heavy-row kernel; small values test long chunks"));

static llvm::cl::opt<int64_t> splitThreshold(
    "split", llvm::cl::init(-1),
    llvm::cl::desc("the heavy-row threshold of every aggregation and "
                   "attention kernel (0: no split, >= 32) instead of the one "
                   "chosen from the graph's statistics (-1); for "
                   "measurements"));

std::vector<std::string> gnn::codegenFlagsGiven() {
  std::vector<std::string> given;
  for (const llvm::cl::Option *o :
       std::initializer_list<const llvm::cl::Option *>{&splitThreshold,
                                                      &maxChunks})
    if (o->getNumOccurrences())
      given.push_back(o->ArgStr.str());
  return given;
}

std::string gnn::checkCodegenFlags() {
  int64_t split = splitThreshold;
  if (split != -1 && split != 0 && split < 32)
    return "--split: expected -1 (the threshold from the graph's statistics), "
           "0 (no split) or a threshold of at least 32 but got " +
           std::to_string(split);
  if (std::string bad = ::mlir::gnn::checkMaxChunks(maxChunks); !bad.empty())
    return "--max-chunks: expected between " +
           std::to_string(::mlir::gnn::kLeastMaxChunks) + " and " +
           std::to_string(::mlir::gnn::kMostMaxChunks) + " but got " +
           std::to_string(maxChunks);
  return "";
}

static double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

/// What decides the generated code for `graph`.
static mlir::gnn::CompileOptions codegenFor(const HostGraph &graph,
                                            const GraphStats &stats) {
  mlir::gnn::CompileOptions codegen;
  codegen.stats = stats;
  // The runtime uses 64-bit indices only when the edges do not fit 32 bits.
  codegen.indexBits = graph.numEdges() >= (int64_t(1) << 31) - 1 ? 64 : 32;
  codegen.maxChunks = maxChunks;
  codegen.split = splitThreshold;
  return codegen;
}

static rt::FormulaScope scopeOf(const GraphStats &s, const HostGraph &g) {
  rt::FormulaScope scope{s.nodes,       s.edges,        s.graphs,
                         s.maxInDegree, s.maxOutDegree, s.largestGraph};
  scope.srcNodes = g.srcNodes();
  scope.dstNodes = g.dstNodes();
  return scope;
}

/// Writes `text` to the file `path`: 1 with "cannot write 'PATH': REASON"
/// when it cannot be opened, written or closed.
static int writeFile(const std::string &path, llvm::StringRef text) {
  std::error_code ec;
  {
    // "-" names a file here, as it always did, not stdout (the JSON).
    llvm::raw_fd_ostream os(path == "-" ? "./-" : path, ec);
    if (!ec) {
      os << text;
      os.close();
      if (os.has_error()) {
        ec = os.error();
        os.clear_error();
      }
    }
  }
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  return 0;
}

/// What the JSON says of a compiled Program (into `out`), and its dumps.
static int describe(const rt::Program &program, double lowerMs,
                    const GraphStats &stats, const std::string &dumpProgram,
                    const std::string &dumpSource, llvm::json::Object &out) {
  if (!dumpProgram.empty())
    GNN_RETURN_IF_FAILED(writeFile(dumpProgram, program.toJson()));
  if (!dumpSource.empty())
    GNN_RETURN_IF_FAILED(writeFile(dumpSource, program.source()));
  out = llvm::json::Object{{"lower_ms", lowerMs},
                           {"kernels", (int64_t)program.kernels.size()},
                           {"steps", (int64_t)program.steps.size()},
                           {"index_bits", program.indexBits},
                           {"stats_option", stats.toOption()}};
  return 0;
}

/// The temporaries' memory plan figures (MemoryPlan.h) into `out`, and its
/// dump.
static int memoryOf(const rt::MemoryPlan &plan, const rt::Program &program,
                    const std::string &dump, llvm::json::Object &out) {
  if (!dump.empty())
    GNN_RETURN_IF_FAILED(writeFile(dump, plan.toJson(program)));
  out = llvm::json::Object{
      {"arena_bytes", (int64_t)plan.arenaBytes},
      {"max_live_bytes", (int64_t)plan.maxLiveBytes},
      {"unplanned_temp_bytes", (int64_t)plan.unplannedBytes}};
  return 0;
}

/// --compile-only: the memory plan at the host graph's sizes and an NVRTC
/// compile for the target, into `cuda`.
static int compileForTarget(const rt::Program &program, const GraphStats &stats,
                            const HostGraph &graph, const std::string &arch,
                            const std::string &dumpMemoryPlan,
                            llvm::json::Object &cuda) {
  rt::StatusOr<rt::MemoryPlan> plan = rt::planMemory(program, scopeOf(stats, graph));
  if (!plan.ok())
    return fail(plan.message());
  llvm::json::Object memory;
  GNN_RETURN_IF_FAILED(memoryOf(*plan, program, dumpMemoryPlan, memory));
  cuda["memory"] = std::move(memory);
  std::string target = arch.empty() ? "sm_90" : arch;
  auto c0 = std::chrono::steady_clock::now();
  rt::StatusOr<std::vector<rt::CompileResult>> compiled =
      rt::compileProgram(program, rt::Compiler::instance(), target);
  if (!compiled.ok())
    return fail(compiled.message());
  cuda["arch"] = target;
  cuda["compile_ms"] = msSince(c0);
  int64_t bytes = 0, units = 0;
  for (const rt::CompileResult &c : *compiled)
    if (c.cubin)
      bytes += (int64_t)c.cubin->image.size(), ++units;
  cuda["cubin_bytes"] = bytes;
  cuda["units"] = units;
  return 0;
}

/// Fails unless there is a device and `need` fits in its free memory.
static int checkFits(const rt::StatusOr<rt::DeviceMemoryNeed> &need,
                     const HostGraph &graph, const GraphStats &stats,
                     const std::string &what, llvm::json::Object &cuda) {
  rt::StatusOr<rt::CudaDriver *> driver = rt::CudaDriver::get();
  if (!driver.ok())
    return fail(driver.message());
  if (!need.ok())
    return fail("graph '" + graph.name + "' (" + std::to_string(stats.nodes) +
                " nodes, " + std::to_string(stats.edges) +
                " edges): " + need.message());
  rt::StatusOr<rt::DeviceMemoryInfo> available = rt::deviceMemoryInfo();
  if (!available.ok())
    return fail(available.message());
  rt::Status fits = rt::checkDeviceMemory(*need, available->freeBytes,
                                          available->totalBytes, what);
  if (!fits.ok())
    return fail(fits.message());
  cuda["device_bytes_needed"] = need->total;
  return 0;
}

/// The shape of a value of `type` holding `elements`: the type's, with the
/// leading size from the count.
static std::vector<int64_t> shapeOf(mlir::Type type, int64_t elements) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!t || t.getRank() == 0)
    return {};
  int64_t row = 1;
  for (int64_t d : t.getShape().drop_front())
    row *= mlir::ShapedType::isDynamic(d) ? 1 : d;
  std::vector<int64_t> shape(t.getShape().begin(), t.getShape().end());
  shape[0] = row ? elements / row : 0;
  return shape;
}

namespace {

/// The device side of one gnn-run: the graph (built once), the buffers bound
/// by name, a stream and the events that time it.
class DeviceRun {
public:
  ~DeviceRun() {
    if (start)
      cudaEventDestroy(start);
    if (stop)
      cudaEventDestroy(stop);
    if (stream)
      cudaStreamDestroy(stream);
  }

  int init(const HostGraph &host, int indexBits, llvm::json::Object &cuda) {
    auto g0 = std::chrono::steady_clock::now();
    rt::StatusOr<std::unique_ptr<rt::Graph>> g = rt::Graph::fromHost(host);
    if (!g.ok())
      return fail(g.message());
    cuda["graph_build_ms"] = msSince(g0);
    graph = std::move(*g);
    if (graph->indexBits() != indexBits)
      return fail("internal: index width of the graph and the program differ");
    if (cudaStreamCreate(&stream) != cudaSuccess ||
        cudaEventCreate(&start) != cudaSuccess ||
        cudaEventCreate(&stop) != cudaSuccess)
      return fail("cannot create a CUDA stream and events");
    return 0;
  }

  /// `t` uploaded as buffer `name` of type `dtype`; adds its bytes.
  int upload(const std::string &name, const Tensor &t, rt::DType dtype,
             int64_t &bytes) {
    size_t n = t.data.size() * rt::elementBytes(dtype);
    rt::StatusOr<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(n);
    bool uploaded = b.ok();
    if (uploaded && dtype == rt::DType::F64) {
      uploaded = b->upload(t.data.data(), n).ok();
    } else if (uploaded && rt::isHalf(dtype)) {
      HalfKind kind = dtype == rt::DType::BF16 ? HalfKind::BF16 : HalfKind::F16;
      std::vector<uint16_t> host;
      for (double x : t.data)
        host.push_back(halfBits(x, kind));
      uploaded = b->upload(host.data(), n).ok();
    } else if (uploaded) {
      std::vector<float> host(t.data.begin(), t.data.end());
      uploaded = b->upload(host.data(), n).ok();
    }
    if (!uploaded)
      return fail("cannot upload " + name);
    bytes += n;
    bindings[name] = b->data();
    owned.push_back(std::move(*b));
    return 0;
  }

  /// A buffer `name` for `decl` at the graph's sizes; adds its bytes.
  int allocate(const std::string &name, const rt::BufferDecl &decl,
               const rt::FormulaScope &scope, int64_t &bytes) {
    rt::StatusOr<int64_t> n = decl.size.evaluate(scope);
    if (!n.ok())
      return fail(n.message());
    size_t size = *n * rt::elementBytes(decl.dtype);
    rt::StatusOr<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(size);
    if (!b.ok())
      return fail(b.message());
    bytes += size;
    bindings[name] = b->data();
    elements[name] = *n;
    owned.push_back(std::move(*b));
    return 0;
  }

  /// A workspace of `bytes` (the Executor's alignment).
  int workspace(size_t bytes, void *&ptr) {
    rt::StatusOr<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(bytes);
    if (!b.ok())
      return fail(b.message());
    ptr = b->data();
    owned.push_back(std::move(*b));
    return 0;
  }

  /// Buffer `name` (allocated) read back as `dtype` into `t`.
  int download(const std::string &name, rt::DType dtype, Tensor &t) {
    int64_t n = elements.at(name);
    const void *ptr = bindings.at(name);
    t.data.resize(n);
    if (dtype == rt::DType::F64) {
      if (cudaMemcpy(t.data.data(), ptr, n * 8, cudaMemcpyDeviceToHost) !=
          cudaSuccess)
        return fail("cannot download " + name);
      return 0;
    }
    if (rt::isHalf(dtype)) {
      HalfKind kind = dtype == rt::DType::BF16 ? HalfKind::BF16 : HalfKind::F16;
      std::vector<uint16_t> host(n);
      if (cudaMemcpy(host.data(), ptr, n * 2, cudaMemcpyDeviceToHost) !=
          cudaSuccess)
        return fail("cannot download " + name);
      for (int64_t k = 0; k < n; ++k)
        t.data[k] = halfValue(host[k], kind);
      return 0;
    }
    std::vector<float> host(n);
    if (cudaMemcpy(host.data(), ptr, n * 4, cudaMemcpyDeviceToHost) !=
        cudaSuccess)
      return fail("cannot download " + name);
    t.data.assign(host.begin(), host.end());
    return 0;
  }

  /// `warmup` untimed and `reps` timed runs of `run` (each enqueues on the
  /// stream); the times into `ms`.
  int time(int warmup, int reps, const std::function<rt::Status()> &run,
           std::vector<double> &ms) {
    for (int r = 0; r < warmup; ++r)
      if (rt::Status s = run(); !s.ok())
        return fail(s.message());
    for (int r = 0; r < reps; ++r) {
      cudaEventRecord(start, stream);
      if (rt::Status s = run(); !s.ok())
        return fail(s.message());
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float t = 0;
      cudaEventElapsedTime(&t, start, stop);
      ms.push_back(t);
    }
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
      return fail(std::string("running the program: ") + cudaGetErrorName(e) +
                  " (" + cudaGetErrorString(e) + ")");
    return 0;
  }

  std::unique_ptr<rt::Graph> graph;
  cudaStream_t stream = nullptr;
  std::map<std::string, void *> bindings;

private:
  cudaEvent_t start = nullptr, stop = nullptr;
  std::map<std::string, int64_t> elements;
  std::vector<rt::DeviceBuffer> owned;
};

/// Elementwise agreement of outputs with the reference.
struct Comparison {
  double worst = 0, maxAbs = 0;
  bool finite = true;
  /// The result types compared (their tolerances are reported).
  std::set<rt::DType> types;

  /// Compares result `name` (stored as `dtype`, checked with the tolerance
  /// of `checkedAs`, the looser of the two: toleranceTypes).
  int add(const std::string &name, const Tensor &t, const Tensor &r,
          rt::DType dtype, rt::DType checkedAs) {
    if (r.data.size() != t.data.size())
      return fail("internal: output " + name + " has " +
                  std::to_string(t.data.size()) + " elements, the reference " +
                  std::to_string(r.data.size()));
    dtype = looser(dtype, checkedAs);
    types.insert(dtype);
    double tolerance = toleranceOf(dtype);
    for (size_t k = 0; k < t.data.size(); ++k) {
      // Equal values, infinities of one sign included, match.
      if (t.data[k] == r.data[k])
        continue;
      double d = std::fabs(t.data[k] - r.data[k]);
      if (std::isnan(d)) {
        if (!(std::isnan(t.data[k]) && std::isnan(r.data[k])))
          finite = false;
        continue;
      }
      maxAbs = std::max(maxAbs, d);
      worst = std::max(worst, d / (tolerance * (1 + std::fabs(r.data[k]))));
    }
    return 0;
  }

  bool match() const { return finite && worst <= 1.0; }

  /// Writes the figures into `cuda`; returns 2 (and says so) on a mismatch.
  int report(llvm::json::Object &cuda, const std::string &what) const {
    // One type: its tolerance; several: each, by type.
    std::string text;
    for (rt::DType t : types)
      text += (text.empty() ? "" : "; ") +
              (types.size() > 1 ? std::string(rt::dtypeName(t)) + ": " : "") +
              toleranceText(t);
    cuda["tolerance"] = text.empty() ? toleranceText(rt::DType::F32) : text;
    cuda["max_abs_error"] = maxAbs;
    cuda["worst_ratio_to_tolerance"] = worst;
    cuda["match"] = match();
    if (match())
      return 0;
    llvm::errs() << "gnn-run: error: the cuda " << what
                 << " differs from the reference (worst error " << worst
                 << " times the tolerance, max |diff| " << maxAbs
                 << (finite ? "" : ", NaN mismatch") << ")\n";
    return 2;
  }
};

} // namespace

/// GNNC_AUTOTUNE (Tuner.h): the heavy-row threshold of `func` timed on this
/// graph and these bindings, or read from the cache, into `codegen.split`;
/// `changed` when the Program must be compiled again.
static int tuneSchedule(mlir::ModuleOp module, mlir::func::FuncOp func,
                        mlir::gnn::CompileOptions &codegen, DeviceRun &run,
                        const std::map<std::string, void *> &bindings,
                        const std::string &arch, llvm::json::Object &cuda,
                        bool &changed) {
  rt::StatusOr<mlir::gnn::TuneOptions> tuneOptions =
      mlir::gnn::tuneOptionsFromEnvironment();
  if (!tuneOptions.ok())
    return fail(tuneOptions.message());
  tuneOptions->arch = arch;
  rt::StatusOr<mlir::gnn::TuneResult> tuned = mlir::gnn::tuneSplit(
      module, func, codegen, *run.graph, bindings, run.stream, *tuneOptions);
  if (!tuned.ok())
    return fail(tuned.message());
  llvm::json::Array timings;
  for (auto [split, ms] : tuned->timings)
    timings.push_back(llvm::json::Object{{"split", split}, {"median_ms", ms}});
  cuda["schedule"] = llvm::json::Object{{"split", tuned->split},
                                        {"source", tuned->source},
                                        {"tune_ms", tuned->tuneMs},
                                        {"candidates", std::move(timings)}};
  changed = tuned->split != -1;
  if (changed)
    codegen.split = tuned->split;
  return 0;
}

/// Times `exe` as a whole (median_ms, min_ms, reps into `cuda`) and, with
/// --profile-steps, each step alone (step_ms), then once more as a whole (a
/// step run alone leaves outputs only the whole program defines).
static int timeProgram(DeviceRun &run, rt::Executable &exe,
                       const std::map<std::string, void *> &bindings,
                       void *workspace, const CudaRunOptions &options,
                       llvm::json::Object &cuda) {
  const rt::Program &program = exe.program();
  auto steps = [&](size_t first, size_t count) {
    return [&, first, count] {
      return exe.runSteps(*run.graph, bindings, run.stream, first, count,
                          workspace);
    };
  };
  int reps = std::max(1, options.reps);
  std::vector<double> ms;
  GNN_RETURN_IF_FAILED(
      run.time(options.warmup, reps, steps(0, program.steps.size()), ms));
  cuda["median_ms"] = rt::median(ms);
  cuda["min_ms"] = *std::min_element(ms.begin(), ms.end());
  cuda["reps"] = (int64_t)ms.size();
  if (!options.profileSteps)
    return 0;
  llvm::json::Array stepMs;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    std::vector<double> one;
    GNN_RETURN_IF_FAILED(run.time(options.warmup, reps, steps(i, 1), one));
    std::string what = std::visit(
        [](const auto &s) -> std::string {
          using T = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<T, rt::LaunchStep>)
            return s.kernel;
          else if constexpr (std::is_same_v<T, rt::GemmStep>)
            return "gemm";
          else if constexpr (std::is_same_v<T, rt::SpmmStep>)
            return "cusparse_spmm";
          else if constexpr (std::is_same_v<T, rt::FillStep>)
            return "fill";
          else
            return "copy";
        },
        program.steps[i]);
    stepMs.push_back(
        llvm::json::Object{{"step", what}, {"median_ms", rt::median(one)}});
  }
  cuda["step_ms"] = std::move(stepMs);
  std::vector<double> whole;
  return run.time(0, 1, steps(0, program.steps.size()), whole);
}

/// The workspace of `exe` on the run's graph (allocated) and its memory
/// figures into `cuda`.
static int workspaceFor(DeviceRun &run, rt::Executable &exe,
                        const std::string &dumpMemoryPlan, void *&workspace,
                        llvm::json::Object &memory) {
  rt::StatusOr<std::shared_ptr<const rt::MemoryPlan>> plan =
      exe.memoryPlan(*run.graph);
  if (!plan.ok())
    return fail(plan.message());
  GNN_RETURN_IF_FAILED(memoryOf(**plan, exe.program(), dumpMemoryPlan, memory));
  return run.workspace((*plan)->arenaBytes, workspace);
}

int gnn::runCudaBackend(mlir::ModuleOp module, mlir::func::FuncOp func,
                        const HostGraph &graph,
                        const std::vector<Tensor> &inputs,
                        const std::vector<Tensor> *reference,
                        const CudaRunOptions &options,
                        llvm::json::Object &summary,
                        std::vector<Tensor> &outputs) {
  GraphStats stats = computeStats(graph);
  mlir::gnn::CompileOptions codegen = codegenFor(graph, stats);
  // Lowered in a copy: the caller's functions stay graph-level.
  auto compile = [&] {
    return mlir::gnn::compileFunction(module, func, codegen);
  };
  auto t0 = std::chrono::steady_clock::now();
  mlir::FailureOr<rt::Program> program = compile();
  if (mlir::failed(program))
    return 1;
  llvm::json::Object cuda;
  GNN_RETURN_IF_FAILED(describe(*program, msSince(t0), stats,
                                options.dumpProgram, options.dumpSource, cuda));
  std::vector<rt::DType> checkedAs = toleranceTypes(func);
  cuda["tolerance_types"] = toleranceJson(checkedAs);
  if (options.compileOnly) {
    GNN_RETURN_IF_FAILED(compileForTarget(*program, stats, graph, options.arch,
                                          options.dumpMemoryPlan, cuda));
    summary["cuda"] = std::move(cuda);
    return 0;
  }

  // Everything the run allocates on the device, before any of it is.
  rt::FormulaScope scope = scopeOf(stats, graph);
  rt::StatusOr<rt::DeviceMemoryNeed> need =
      rt::deviceMemoryNeed(*program, scope, /*batch=*/!graph.graphIds.empty());
  GNN_RETURN_IF_FAILED(checkFits(need, graph, stats,
                                 "running '" + program->name + "' on graph '" +
                                     graph.name + "'",
                                 cuda));
  auto c0 = std::chrono::steady_clock::now();
  rt::StatusOr<std::unique_ptr<rt::Executable>> exe =
      rt::Executable::create(*program, rt::Compiler::instance(), options.arch);
  if (!exe.ok())
    return fail(exe.message());
  cuda["compile_ms"] = msSince(c0);
  DeviceRun run;
  GNN_RETURN_IF_FAILED(run.init(graph, program->indexBits, cuda));

  // Inputs (of their buffers' types, f32 or f64) and outputs on the device.
  int64_t inputBytes = 0, outputBytes = 0;
  std::map<std::string, const rt::BufferDecl *> decls;
  for (const rt::BufferDecl &d : program->buffers)
    decls[d.name] = &d;
  size_t next = 0;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (mlir::isa<mlir::gnn::GraphType>(arg.getType()))
      continue;
    std::string name = "arg" + std::to_string(i);
    if (!decls.count(name))
      return fail("internal: program '" + program->name + "' has no buffer " +
                  name);
    GNN_RETURN_IF_FAILED(
        run.upload(name, inputs[next++], decls[name]->dtype, inputBytes));
  }
  std::vector<const rt::BufferDecl *> outputDecls;
  for (const rt::BufferDecl &d : program->buffers)
    if (d.role == rt::BufferRole::Output) {
      GNN_RETURN_IF_FAILED(run.allocate(d.name, d, scope, outputBytes));
      outputDecls.push_back(&d);
    }

  bool changed = false;
  GNN_RETURN_IF_FAILED(tuneSchedule(module, func, codegen, run, run.bindings,
                                    options.arch, cuda, changed));
  if (changed) {
    program = compile();
    if (mlir::failed(program))
      return 1;
    exe = rt::Executable::create(*program, rt::Compiler::instance(),
                                 options.arch);
    if (!exe.ok())
      return fail(exe.message());
  }

  // Every buffer, temporaries unplanned (one allocation each).
  cuda["program_bytes"] = need->buffers.inputs + need->buffers.outputs +
                          need->buffers.temps;
  // The temporaries' workspace, as the Python package passes one: the plan
  // the Executable makes for the GPU graph.
  void *workspace = nullptr;
  llvm::json::Object memory;
  GNN_RETURN_IF_FAILED(
      workspaceFor(run, **exe, options.dumpMemoryPlan, workspace, memory));
  // Device memory held while the Program runs: the graph's arrays, inputs,
  // outputs and the workspace (cuSPARSE's and cuBLAS's own caches aside).
  int64_t graphBytes = (int64_t)run.graph->deviceBytes();
  int64_t arena = memory.getInteger("arena_bytes").value_or(0);
  int64_t unplanned = memory.getInteger("unplanned_temp_bytes").value_or(0);
  memory["graph_bytes"] = graphBytes;
  memory["input_bytes"] = inputBytes;
  memory["output_bytes"] = outputBytes;
  memory["unplanned_peak_device_bytes"] =
      graphBytes + inputBytes + outputBytes + unplanned;
  cuda["peak_device_bytes"] = graphBytes + inputBytes + outputBytes + arena;
  cuda["memory"] = std::move(memory);

  GNN_RETURN_IF_FAILED(
      timeProgram(run, **exe, run.bindings, workspace, options, cuda));

  // Results back, compared with the reference.
  Comparison cmp;
  outputs.clear();
  for (auto [i, decl] : llvm::enumerate(outputDecls)) {
    Tensor t;
    GNN_RETURN_IF_FAILED(run.download(decl->name, decl->dtype, t));
    t.shape = shapeOf(func.getResultTypes()[i], t.data.size());
    if (reference && i < reference->size()) {
      t.shape = (*reference)[i].shape;
      GNN_RETURN_IF_FAILED(cmp.add(decl->name, t, (*reference)[i],
                                   decl->dtype, checkedAs.at(i)));
    }
    outputs.push_back(std::move(t));
  }
  int rc = reference ? cmp.report(cuda, "result") : 0;
  summary["cuda"] = std::move(cuda);
  return rc;
}

int gnn::runCudaTraining(mlir::ModuleOp module,
                         const mlir::gnn::TrainingFunctions &training,
                         const HostGraph &graph,
                         const std::vector<Tensor> &inputs,
                         const TrainingCheck &check,
                         const CudaRunOptions &options,
                         llvm::json::Object &summary,
                         std::vector<Tensor> &forwardOutputs,
                         std::vector<Tensor> &gradients) {
  // (Op handles: copies, their methods are not const.)
  mlir::func::FuncOp fwdFunc = training.forward, bwdFunc = training.backward;
  GraphStats stats = computeStats(graph);
  mlir::gnn::CompileOptions fwdCodegen = codegenFor(graph, stats);
  mlir::gnn::CompileOptions bwdCodegen = fwdCodegen;
  auto t0 = std::chrono::steady_clock::now();
  mlir::FailureOr<rt::TrainingProgram> program =
      mlir::gnn::compileTrainingProgram(module, training, fwdCodegen,
                                        bwdCodegen);
  if (mlir::failed(program))
    return 1;
  double lowerMs = msSince(t0);
  auto suffixed = [](const std::string &path, const char *suffix) {
    return path.empty() ? path : path + suffix;
  };
  llvm::json::Object fwd, bwd;
  GNN_RETURN_IF_FAILED(describe(program->forward, lowerMs, stats,
                                suffixed(options.dumpProgram, ".fwd"),
                                suffixed(options.dumpSource, ".fwd"), fwd));
  GNN_RETURN_IF_FAILED(describe(program->backward, lowerMs, stats,
                                suffixed(options.dumpProgram, ".bwd"),
                                suffixed(options.dumpSource, ".bwd"), bwd));
  std::string fwdPlan = suffixed(options.dumpMemoryPlan, ".fwd");
  std::string bwdPlan = suffixed(options.dumpMemoryPlan, ".bwd");
  std::vector<rt::DType> fwdCheckedAs = toleranceTypes(fwdFunc),
                         bwdCheckedAs = toleranceTypes(bwdFunc);
  fwd["tolerance_types"] = toleranceJson(fwdCheckedAs);
  bwd["tolerance_types"] = toleranceJson(bwdCheckedAs);
  llvm::json::Object bindingsJson;
  for (const auto &[name, step] : program->backwardBindings)
    bindingsJson[name] = step;
  llvm::json::Object cuda{{"backward_bindings", std::move(bindingsJson)}};
  if (options.compileOnly) {
    GNN_RETURN_IF_FAILED(compileForTarget(program->forward, stats, graph, options.arch,
                                          fwdPlan, fwd));
    GNN_RETURN_IF_FAILED(compileForTarget(program->backward, stats, graph,
                                          options.arch, bwdPlan, bwd));
    cuda["fwd"] = std::move(fwd);
    cuda["bwd"] = std::move(bwd);
    summary["cuda"] = std::move(cuda);
    return 0;
  }

  rt::FormulaScope scope = scopeOf(stats, graph);
  GNN_RETURN_IF_FAILED(checkFits(
      rt::trainingMemoryNeed(*program, scope, !graph.graphIds.empty()), graph,
      stats,
      "training '" + fwdFunc.getSymName().str() + "' on graph '" +
          graph.name + "'",
      cuda));
  auto c0 = std::chrono::steady_clock::now();
  rt::StatusOr<std::unique_ptr<rt::TrainingExecutable>> exe =
      rt::TrainingExecutable::create(*program, rt::Compiler::instance(),
                                     options.arch);
  if (!exe.ok())
    return fail(exe.message());
  cuda["compile_ms"] = msSince(c0);
  DeviceRun run;
  GNN_RETURN_IF_FAILED(run.init(graph, program->forward.indexBits, cuda));

  // The step's buffers: the arguments uploaded, the results and residuals,
  // the output gradients (seeded) and the gradients, all bound by name.
  std::vector<rt::BufferDecl> step = program->stepBuffers();
  // Function argument number -> position among the tensor inputs.
  std::map<int64_t, size_t> input;
  {
    size_t next = 0;
    for (auto [i, arg] : llvm::enumerate(fwdFunc.getArguments()))
      if (!mlir::isa<mlir::gnn::GraphType>(arg.getType()))
        input[i] = next++;
  }
  std::vector<std::vector<int64_t>> resultShapes;
  for (const rt::BufferDecl &d : step)
    if (d.use == rt::BufferUse::OutputGradient) {
      rt::StatusOr<int64_t> n = d.size.evaluate(scope);
      if (!n.ok())
        return fail(n.message());
      resultShapes.push_back(shapeOf(fwdFunc.getResultTypes()[d.index], *n));
    }
  std::vector<Tensor> outputGrads = check.seedOutputGrads(resultShapes);
  int64_t inputBytes = 0, outputBytes = 0, dyBytes = 0, gradBytes = 0;
  std::vector<const rt::BufferDecl *> results, grads;
  size_t dy = 0;
  for (const rt::BufferDecl &d : step) {
    switch (d.use) {
    case rt::BufferUse::Argument:
      GNN_RETURN_IF_FAILED(run.upload(d.name, inputs.at(input.at(d.index)),
                                      d.dtype, inputBytes));
      break;
    case rt::BufferUse::OutputGradient:
      GNN_RETURN_IF_FAILED(
          run.upload(d.name, outputGrads.at(dy++), d.dtype, dyBytes));
      break;
    case rt::BufferUse::Result:
    case rt::BufferUse::Residual:
      GNN_RETURN_IF_FAILED(run.allocate(d.name, d, scope, outputBytes));
      results.push_back(&d);
      break;
    case rt::BufferUse::Gradient:
      GNN_RETURN_IF_FAILED(run.allocate(d.name, d, scope, gradBytes));
      grads.push_back(&d);
      break;
    case rt::BufferUse::None:
      return fail("the training step has a buffer of no use, '" + d.name + "'");
    }
  }

  // GNNC_AUTOTUNE: each Program's threshold on its own bindings.
  rt::StatusOr<std::map<std::string, void *>> fwdBindings =
      (*exe)->forwardBindings(run.bindings);
  rt::StatusOr<std::map<std::string, void *>> bwdBindings =
      (*exe)->backwardBindings(run.bindings);
  if (!fwdBindings.ok() || !bwdBindings.ok())
    return fail(fwdBindings.ok() ? bwdBindings.message()
                                 : fwdBindings.message());
  bool fwdChanged = false, bwdChanged = false;
  GNN_RETURN_IF_FAILED(tuneSchedule(module, fwdFunc, fwdCodegen, run,
                                    *fwdBindings, options.arch, fwd,
                                    fwdChanged));
  GNN_RETURN_IF_FAILED(tuneSchedule(module, bwdFunc, bwdCodegen, run,
                                    *bwdBindings, options.arch, bwd,
                                    bwdChanged));
  if (fwdChanged || bwdChanged) {
    program = mlir::gnn::compileTrainingProgram(module, training, fwdCodegen,
                                                bwdCodegen);
    if (mlir::failed(program))
      return 1;
    exe = rt::TrainingExecutable::create(*program, rt::Compiler::instance(),
                                         options.arch);
    if (!exe.ok())
      return fail(exe.message());
  }

  // One workspace per phase (the Python package frees the forward's before
  // the backward runs).
  void *fwdWorkspace = nullptr, *bwdWorkspace = nullptr;
  llvm::json::Object fwdMemory, bwdMemory;
  GNN_RETURN_IF_FAILED(workspaceFor(run, (*exe)->forwardExecutable(), fwdPlan,
                                    fwdWorkspace, fwdMemory));
  GNN_RETURN_IF_FAILED(workspaceFor(run, (*exe)->backwardExecutable(), bwdPlan,
                                    bwdWorkspace, bwdMemory));
  // Device memory of one training step, counted like the peers'
  // `max_memory_allocated() - base` (base: the graph and the inputs,
  // allocated before the step): while the forward runs, its outputs
  // (results and residuals) and its workspace; while the backward runs, the
  // forward's outputs (still held), the output gradients, the gradients and
  // the backward's workspace. Residuals that are the forward's own
  // arguments or results are not outputs of their own.
  int64_t graphBytes = (int64_t)run.graph->deviceBytes();
  int64_t base = graphBytes + inputBytes;
  int64_t fwdPeak =
      outputBytes + fwdMemory.getInteger("arena_bytes").value_or(0);
  int64_t bwdPeak = outputBytes + dyBytes + gradBytes +
                    bwdMemory.getInteger("arena_bytes").value_or(0);
  fwdMemory["output_bytes"] = outputBytes;
  bwdMemory["output_bytes"] = gradBytes;
  bwdMemory["output_gradient_bytes"] = dyBytes;
  fwd["memory"] = std::move(fwdMemory);
  bwd["memory"] = std::move(bwdMemory);

  // The forward, the backward, each timed on its own, then whole steps.
  GNN_RETURN_IF_FAILED(timeProgram(run, (*exe)->forwardExecutable(),
                                   *fwdBindings, fwdWorkspace, options, fwd));
  GNN_RETURN_IF_FAILED(timeProgram(run, (*exe)->backwardExecutable(),
                                   *bwdBindings, bwdWorkspace, options, bwd));
  std::vector<double> stepMs;
  GNN_RETURN_IF_FAILED(run.time(
      options.warmup, std::max(1, options.reps),
      [&]() -> rt::Status {
        GNN_RETURN_IF_ERROR((*exe)->forward(*run.graph, run.bindings,
                                            run.stream, fwdWorkspace));
        return (*exe)->backward(*run.graph, run.bindings, run.stream,
                                bwdWorkspace);
      },
      stepMs));

  // The forward's outputs and the gradients of the last step, each against
  // the reference (the gradients' reference reads the GPU's residuals, or
  // the reference forward's, below).
  Comparison fwdCmp, bwdCmp;
  forwardOutputs.clear();
  for (auto [k, d] : llvm::enumerate(results)) {
    Tensor t;
    GNN_RETURN_IF_FAILED(run.download(d->name, d->dtype, t));
    t.shape = shapeOf(fwdFunc.getResultTypes()[k], t.data.size());
    if (check.forward && k < check.forward->size()) {
      t.shape = (*check.forward)[k].shape;
      GNN_RETURN_IF_FAILED(fwdCmp.add(d->name, t, (*check.forward)[k],
                                      d->dtype, fwdCheckedAs.at(k)));
    }
    forwardOutputs.push_back(std::move(t));
  }
  mlir::FailureOr<std::vector<Tensor>> reference = std::vector<Tensor>();
  if (check.referenceGrads) {
    reference = check.referenceGrads(forwardOutputs, outputGrads);
    if (mlir::failed(reference))
      return 1;
  }
  gradients.clear();
  for (auto [m, d] : llvm::enumerate(grads)) {
    Tensor t;
    GNN_RETURN_IF_FAILED(run.download(d->name, d->dtype, t));
    t.shape = shapeOf(bwdFunc.getResultTypes()[m], t.data.size());
    if (m < reference->size()) {
      t.shape = (*reference)[m].shape;
      GNN_RETURN_IF_FAILED(bwdCmp.add(d->name, t, (*reference)[m], d->dtype,
                                      bwdCheckedAs.at(m)));
    }
    gradients.push_back(std::move(t));
  }
  // The reference backward on the GPU's residuals recomputes the values
  // the backward does not keep in double precision; where it compares them
  // with a residual the GPU stored in its type (a max over computed edge
  // values: which edges attain it), hardly any does, and its gradient is
  // wrong, not the GPU's. The reference backward on the reference's own
  // forward (every residual from it) is then the reference: the gradients
  // must match one of the two.
  std::string residualsOf = "cuda forward";
  if (check.referenceGrads && check.forward && !bwdCmp.match()) {
    mlir::FailureOr<std::vector<Tensor>> own =
        check.referenceGrads(*check.forward, outputGrads);
    if (mlir::failed(own))
      return 1;
    Comparison ownCmp;
    for (auto [m, d] : llvm::enumerate(grads))
      if (m < own->size())
        GNN_RETURN_IF_FAILED(ownCmp.add(d->name, gradients[m], (*own)[m],
                                        d->dtype, bwdCheckedAs.at(m)));
    if (ownCmp.match()) {
      bwdCmp = ownCmp;
      residualsOf = "reference forward";
    } else {
      // Reported against the first; the second differs too.
      residualsOf = "cuda forward (the reference forward's differ too)";
    }
  }
  int rc = 0;
  if (check.forward)
    rc = std::max(rc, fwdCmp.report(fwd, "forward"));
  if (check.referenceGrads) {
    bwd["reference_residuals"] = residualsOf;
    rc = std::max(rc, bwdCmp.report(bwd, "gradient"));
  }
  cuda["fwd"] = std::move(fwd);
  cuda["bwd"] = std::move(bwd);
  cuda["fwdbwd_median_ms"] = rt::median(stepMs);
  cuda["fwdbwd_min_ms"] = *std::min_element(stepMs.begin(), stepMs.end());
  cuda["fwd_phase_device_bytes"] = fwdPeak;
  cuda["bwd_phase_device_bytes"] = bwdPeak;
  // Above the graph and the inputs (the peers' train peak).
  cuda["peak_device_bytes"] = std::max(fwdPeak, bwdPeak);
  cuda["graph_and_input_bytes"] = base;
  cuda["total_peak_device_bytes"] = base + std::max(fwdPeak, bwdPeak);
  if (check.forward && check.referenceGrads)
    cuda["match"] = fwdCmp.match() && bwdCmp.match();
  summary["cuda"] = std::move(cuda);
  return rc;
}
