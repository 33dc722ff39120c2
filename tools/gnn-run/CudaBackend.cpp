//===- CudaBackend.cpp - gnn-run's cuda backend ---------------------------===//
//
// Part of gnnc. Lowers a function to a Program, runs it with the runtime and
// checks it against the reference: |gnnc - ref| <= tol * (1 + |ref|)
// elementwise against the float64 reference, tol = 1e-4 for f32 results and
// 1e-9 for f64 ones. Before allocating anything on the device it checks that
// the graph, the inputs, the outputs and the workspace fit in the free
// device memory.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/DeviceBytes.h"
#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/MemoryPlan.h"
#include "gnn/Runtime/Timing.h"
#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Compiler/Driver.h"
#include "gnn/Compiler/Tuner.h"

#include "llvm/Support/raw_ostream.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

using namespace gnn;
namespace rt = gnn::runtime;

/// The documented tolerances of the cuda backend against the reference, for
/// f32 and f64 results.
static constexpr double kTolerance = 1e-4;
static constexpr double kToleranceF64 = 1e-9;

/// The declaration of buffer `name` of `program` (every input and output has
/// one).
static const rt::BufferDecl *findBuffer(const rt::Program &program,
                                        const std::string &name) {
  for (const rt::BufferDecl &d : program.buffers)
    if (d.name == name)
      return &d;
  return nullptr;
}

static int fail(const std::string &message) {
  llvm::errs() << "gnn-run: error: " << message << "\n";
  return 1;
}

static llvm::cl::opt<int64_t> maxChunks(
    "max-chunks", llvm::cl::init(8192),
    llvm::cl::desc("the most chunks (blocks and partial results) of a split "
                   "heavy-row kernel; small values test long chunks"));

static llvm::cl::opt<int64_t> splitThreshold(
    "split", llvm::cl::init(-1),
    llvm::cl::desc("the heavy-row threshold of every aggregation and "
                   "attention kernel (0: no split, >= 32) instead of the one "
                   "chosen from the graph's statistics (-1); for "
                   "measurements"));

int gnn::runCudaBackend(mlir::ModuleOp module, mlir::func::FuncOp func,
                        const HostGraph &graph,
                        const std::vector<Tensor> &inputs,
                        const std::vector<Tensor> *reference,
                        const CudaRunOptions &options,
                        llvm::json::Object &summary,
                        std::vector<Tensor> &outputs) {
  GraphStats stats = computeStats(graph);
  mlir::gnn::CompileOptions codegen;
  codegen.stats = stats;
  // The runtime uses 64-bit indices only when the edges do not fit 32 bits.
  codegen.indexBits = graph.numEdges() >= (int64_t(1) << 31) - 1 ? 64 : 32;
  codegen.maxChunks = maxChunks;
  codegen.split = splitThreshold;
  auto t0 = std::chrono::steady_clock::now();
  // Lowering rewrites the module in place: compile a copy, so the caller's
  // functions stay graph-level (--grad evaluates @f_bwd on the reference
  // after @f_fwd was compiled).
  mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
  auto copyFunc = copy->lookupSymbol<mlir::func::FuncOp>(func.getSymName());
  mlir::FailureOr<rt::Program> program =
      mlir::gnn::compileToProgram(*copy, copyFunc, codegen);
  if (mlir::failed(program))
    return 1;
  double lowerMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - t0)
                       .count();
  if (!options.dumpProgram.empty())
    std::ofstream(options.dumpProgram) << program->toJson();
  if (!options.dumpSource.empty())
    std::ofstream(options.dumpSource) << program->source;
  llvm::json::Object cuda{{"lower_ms", lowerMs},
                          {"kernels", (int64_t)program->kernels.size()},
                          {"steps", (int64_t)program->steps.size()},
                          {"index_bits", program->indexBits},
                          {"stats_option", stats.toOption()}};

  // The temporaries' memory plan (MemoryPlan.h) and its figures.
  auto memoryOf = [&](const rt::MemoryPlan &plan) {
    if (!options.dumpMemoryPlan.empty())
      std::ofstream(options.dumpMemoryPlan) << plan.toJson(*program);
    return llvm::json::Object{
        {"arena_bytes", (int64_t)plan.arenaBytes},
        {"max_live_bytes", (int64_t)plan.maxLiveBytes},
        {"unplanned_temp_bytes", (int64_t)plan.unplannedBytes}};
  };

  if (options.compileOnly) {
    // The plan at the host graph's sizes, as the Executable would make it.
    rt::StatusOr<rt::MemoryPlan> plan = rt::planMemory(
        *program, rt::FormulaScope{stats.nodes, stats.edges, stats.graphs,
                                   stats.maxInDegree, stats.maxOutDegree,
                                   stats.largestGraph});
    if (!plan.ok())
      return fail(plan.message());
    cuda["memory"] = memoryOf(*plan);
    rt::CompileRequest req;
    req.source = program->source;
    req.name = program->name;
    req.arch = options.arch.empty() ? "sm_90" : options.arch;
    req.options = program->options;
    auto c0 = std::chrono::steady_clock::now();
    rt::StatusOr<rt::CompileResult> compiled = rt::Compiler::instance().compile(req);
    if (!compiled.ok())
      return fail(compiled.message());
    cuda["arch"] = req.arch;
    cuda["compile_ms"] = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - c0)
                             .count();
    cuda["cubin_bytes"] = (int64_t)compiled->cubin->image.size();
    summary["cuda"] = std::move(cuda);
    return 0;
  }

  rt::StatusOr<rt::CudaDriver *> driver = rt::CudaDriver::get();
  if (!driver.ok())
    return fail(driver.message());
  // Everything the run allocates on the device, before any of it is.
  rt::FormulaScope scope{stats.nodes,        stats.edges,
                         stats.graphs,       stats.maxInDegree,
                         stats.maxOutDegree, stats.largestGraph};
  rt::StatusOr<rt::DeviceMemoryNeed> need =
      rt::deviceMemoryNeed(*program, scope, /*batch=*/!graph.graphIds.empty());
  if (!need.ok())
    return fail("graph '" + graph.name + "' (" + std::to_string(stats.nodes) +
                " nodes, " + std::to_string(stats.edges) +
                " edges): " + need.message());
  rt::StatusOr<rt::DeviceMemoryInfo> available = rt::deviceMemoryInfo();
  if (!available.ok())
    return fail(available.message());
  rt::Status fits = rt::checkDeviceMemory(
      *need, available->freeBytes, available->totalBytes,
      "running '" + program->name + "' on graph '" + graph.name + "'");
  if (!fits.ok())
    return fail(fits.message());
  cuda["device_bytes_needed"] = need->total;
  auto c0 = std::chrono::steady_clock::now();
  rt::StatusOr<std::unique_ptr<rt::Executable>> exe =
      rt::Executable::create(*program, rt::Compiler::instance(), options.arch);
  if (!exe.ok())
    return fail(exe.message());
  cuda["compile_ms"] = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - c0)
                           .count();
  auto g0 = std::chrono::steady_clock::now();
  rt::StatusOr<std::unique_ptr<rt::Graph>> g = rt::Graph::fromHost(graph);
  if (!g.ok())
    return fail(g.message());
  cuda["graph_build_ms"] = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - g0)
                               .count();
  if ((*g)->indexBits() != program->indexBits)
    return fail("internal: index width of the graph and the program differ");

  // Inputs (of their buffers' types, f32 or f64) and outputs on the device.
  std::map<std::string, void *> bindings;
  std::vector<rt::DeviceBuffer> owned;
  int64_t inputBytes = 0, outputBytes = 0;
  size_t next = 0;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (mlir::isa<mlir::gnn::GraphType>(arg.getType()))
      continue;
    const Tensor &t = inputs[next++];
    std::string name = "arg" + std::to_string(i);
    const rt::BufferDecl *decl = findBuffer(*program, name);
    if (!decl)
      return fail("internal: program '" + program->name + "' has no buffer " +
                  name);
    size_t bytes = t.data.size() * rt::elementBytes(decl->dtype);
    rt::StatusOr<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(bytes);
    bool uploaded = b.ok();
    if (uploaded && decl->dtype == rt::DType::F64) {
      uploaded = b->upload(t.data.data(), bytes).ok();
    } else if (uploaded) {
      std::vector<float> host(t.data.begin(), t.data.end());
      uploaded = b->upload(host.data(), bytes).ok();
    }
    if (!uploaded)
      return fail("cannot upload input #" + std::to_string(i));
    bindings[name] = b->data();
    inputBytes += bytes;
    owned.push_back(std::move(*b));
  }
  std::vector<const rt::BufferDecl *> outputDecls;
  std::vector<int64_t> outputSizes;
  for (const rt::BufferDecl &d : program->buffers) {
    if (d.role != rt::BufferRole::Output)
      continue;
    rt::StatusOr<int64_t> n = d.size.evaluate(scope);
    if (!n.ok())
      return fail(n.message());
    size_t bytes = *n * rt::elementBytes(d.dtype);
    rt::StatusOr<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(bytes);
    if (!b.ok())
      return fail(b.message());
    bindings[d.name] = b->data();
    outputBytes += bytes;
    outputDecls.push_back(&d);
    outputSizes.push_back(*n);
    owned.push_back(std::move(*b));
  }
  cudaStream_t stream;
  cudaStreamCreate(&stream);

  // The autotuner (GNNC_AUTOTUNE, Tuner.h): the heavy-row threshold timed
  // on this graph and these inputs, or read from the cache; the Program is
  // compiled again when it differs from the model's.
  rt::StatusOr<mlir::gnn::TuneOptions> tuneOptions =
      mlir::gnn::tuneOptionsFromEnvironment();
  if (!tuneOptions.ok())
    return fail(tuneOptions.message());
  tuneOptions->arch = options.arch;
  rt::StatusOr<mlir::gnn::TuneResult> tuned = mlir::gnn::tuneSplit(
      module, func, codegen, **g, bindings, stream, *tuneOptions);
  if (!tuned.ok())
    return fail(tuned.message());
  llvm::json::Array timings;
  for (auto [split, ms] : tuned->timings)
    timings.push_back(llvm::json::Object{{"split", split}, {"median_ms", ms}});
  cuda["schedule"] = llvm::json::Object{{"split", tuned->split},
                                        {"source", tuned->source},
                                        {"tune_ms", tuned->tuneMs},
                                        {"candidates", std::move(timings)}};
  if (tuned->split != -1) {
    codegen.split = tuned->split;
    mlir::OwningOpRef<mlir::ModuleOp> again = module.clone();
    program = mlir::gnn::compileToProgram(
        *again, again->lookupSymbol<mlir::func::FuncOp>(func.getSymName()),
        codegen);
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
  rt::StatusOr<std::shared_ptr<const rt::MemoryPlan>> plan =
      (*exe)->memoryPlan(**g);
  if (!plan.ok())
    return fail(plan.message());
  size_t arena = (*plan)->arenaBytes;
  rt::StatusOr<rt::DeviceBuffer> workspace = rt::DeviceBuffer::allocate(arena);
  if (!workspace.ok())
    return fail(workspace.message());
  // Device memory held while the Program runs: the graph's arrays, inputs,
  // outputs and the workspace (cuSPARSE's and cuBLAS's own caches aside).
  int64_t graphBytes = (int64_t)(*g)->deviceBytes();
  llvm::json::Object memory = memoryOf(**plan);
  memory["graph_bytes"] = graphBytes;
  memory["input_bytes"] = inputBytes;
  memory["output_bytes"] = outputBytes;
  memory["unplanned_peak_device_bytes"] =
      graphBytes + inputBytes + outputBytes + (int64_t)(*plan)->unplannedBytes;
  cuda["peak_device_bytes"] =
      graphBytes + inputBytes + outputBytes + (int64_t)arena;
  cuda["memory"] = std::move(memory);

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  auto timeRange = [&](size_t first, size_t count, int reps,
                       std::vector<double> &ms) -> int {
    for (int r = 0; r < options.warmup; ++r) {
      rt::Status s = (*exe)->runSteps(**g, bindings, stream, first, count,
                                      workspace->data());
      if (!s.ok())
        return fail(s.message());
    }
    for (int r = 0; r < reps; ++r) {
      cudaEventRecord(start, stream);
      rt::Status s = (*exe)->runSteps(**g, bindings, stream, first, count,
                                      workspace->data());
      if (!s.ok())
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
  };
  std::vector<double> ms;
  if (int rc = timeRange(0, program->steps.size(), std::max(1, options.reps), ms))
    return rc;
  cuda["median_ms"] = rt::median(ms);
  cuda["min_ms"] = ms.empty() ? 0.0 : *std::min_element(ms.begin(), ms.end());
  cuda["reps"] = (int64_t)ms.size();
  if (options.profileSteps) {
    llvm::json::Array steps;
    for (size_t i = 0; i < program->steps.size(); ++i) {
      std::vector<double> one;
      if (int rc = timeRange(i, 1, std::max(1, options.reps), one))
        return rc;
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
          program->steps[i]);
      steps.push_back(llvm::json::Object{{"step", what}, {"median_ms", rt::median(one)}});
    }
    cuda["step_ms"] = std::move(steps);
    // A step run alone leaves outputs that only the whole program defines
    // (a result a kernel adds into is zeroed by the step before it): run the
    // program once more for the outputs compared and written below.
    std::vector<double> whole;
    if (int rc = timeRange(0, program->steps.size(), 1, whole))
      return rc;
  }

  // Results back, compared with the reference.
  double worst = 0, maxAbs = 0;
  bool finite = true, anyF64 = false;
  outputs.clear();
  for (auto [i, decl] : llvm::enumerate(outputDecls)) {
    Tensor t;
    bool f64 = decl->dtype == rt::DType::F64;
    anyF64 |= f64;
    double tolerance = f64 ? kToleranceF64 : kTolerance;
    if (f64) {
      t.data.resize(outputSizes[i]);
      if (cudaMemcpy(t.data.data(), bindings[decl->name], t.data.size() * 8,
                     cudaMemcpyDeviceToHost) != cudaSuccess)
        return fail("cannot download " + decl->name);
    } else {
      std::vector<float> host(outputSizes[i]);
      if (cudaMemcpy(host.data(), bindings[decl->name], host.size() * 4,
                     cudaMemcpyDeviceToHost) != cudaSuccess)
        return fail("cannot download " + decl->name);
      t.data.assign(host.begin(), host.end());
    }
    // The shape: the result type's, with the leading size from the count.
    if (auto type = llvm::dyn_cast<mlir::RankedTensorType>(func.getResultTypes()[i]);
        type && type.getRank() >= 1) {
      int64_t row = 1;
      for (int64_t d : type.getShape().drop_front())
        row *= mlir::ShapedType::isDynamic(d) ? 1 : d;
      t.shape.assign(type.getShape().begin(), type.getShape().end());
      t.shape[0] = row ? static_cast<int64_t>(t.data.size()) / row : 0;
    }
    if (reference && i < reference->size()) {
      const Tensor &r = (*reference)[i];
      t.shape = r.shape;
      if (r.data.size() != t.data.size())
        return fail("internal: output " + decl->name + " has " +
                    std::to_string(t.data.size()) + " elements, the reference " +
                    std::to_string(r.data.size()));
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
    }
    outputs.push_back(std::move(t));
  }
  bool match = finite && worst <= 1.0;
  if (reference) {
    cuda["tolerance"] = anyF64 ? "|gnnc - ref| <= 1e-9 * (1 + |ref|)"
                               : "|gnnc - ref| <= 1e-4 * (1 + |ref|)";
    cuda["max_abs_error"] = maxAbs;
    cuda["worst_ratio_to_tolerance"] = worst;
    cuda["match"] = match;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  summary["cuda"] = std::move(cuda);
  if (reference && !match) {
    llvm::errs() << "gnn-run: error: the cuda result differs from the "
                    "reference (worst error "
                 << worst << " times the tolerance, max |diff| " << maxAbs
                 << (finite ? "" : ", NaN mismatch") << ")\n";
    return 2;
  }
  return 0;
}
