//===- CudaBackend.cpp - gnn-run's cuda backend ---------------------------===//
//
// Part of gnnc. Lowers a function to a Program, runs it with the runtime and
// checks it against the reference: |gnnc - ref| <= 1e-4 * (1 + |ref|)
// elementwise (fp32 on the GPU against the float64 reference).
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/MemoryPlan.h"
#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Compiler/Driver.h"

#include "llvm/Support/raw_ostream.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

using namespace gnn;
namespace rt = gnn::runtime;

/// The documented tolerance of the cuda backend against the reference.
static constexpr double kTolerance = 1e-4;

static int fail(const std::string &message) {
  llvm::errs() << "gnn-run: error: " << message << "\n";
  return 1;
}

static double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static llvm::cl::opt<int64_t> maxChunks(
    "max-chunks", llvm::cl::init(8192),
    llvm::cl::desc("the most chunks (blocks and partial results) of a split "
                   "heavy-row kernel; small values test long chunks"));

int gnn::runCudaBackend(mlir::ModuleOp module, mlir::func::FuncOp func,
                        const HostGraph &graph,
                        const std::vector<Tensor> &inputs,
                        const std::vector<Tensor> *reference,
                        const CudaRunOptions &options,
                        llvm::json::Object &summary,
                        std::vector<Tensor> &outputs) {
  GraphStats stats = computeStats(graph);
  mlir::gnn::CompileOptions codegen;
  codegen.meanDegree = stats.nodes ? double(stats.edges) / stats.nodes : 0.0;
  codegen.maxDegree = stats.maxInDegree;
  // The runtime uses 64-bit indices only when the edges do not fit 32 bits.
  codegen.indexBits = graph.numEdges() >= (int64_t(1) << 31) - 1 ? 64 : 32;
  codegen.maxChunks = maxChunks;
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
                          {"mean_degree", codegen.meanDegree}};

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

  // Inputs (float32) and outputs on the device.
  std::map<std::string, void *> bindings;
  std::vector<rt::DeviceBuffer> owned;
  int64_t programBytes = 0, inputBytes = 0, outputBytes = 0;
  rt::FormulaScope scope{stats.nodes, stats.edges, stats.graphs,
                         stats.maxInDegree, stats.maxOutDegree, stats.largestGraph};
  size_t next = 0;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (mlir::isa<mlir::gnn::GraphType>(arg.getType()))
      continue;
    const Tensor &t = inputs[next++];
    std::vector<float> host(t.data.begin(), t.data.end());
    rt::StatusOr<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(host.size() * 4);
    if (!b.ok() || !b->upload(host.data(), host.size() * 4).ok())
      return fail("cannot upload input #" + std::to_string(i));
    bindings["arg" + std::to_string(i)] = b->data();
    inputBytes += host.size() * 4;
    owned.push_back(std::move(*b));
  }
  std::vector<std::pair<std::string, int64_t>> outputSizes;
  for (const rt::BufferDecl &d : program->buffers) {
    rt::StatusOr<int64_t> n = d.size.evaluate(scope);
    if (!n.ok())
      return fail(n.message());
    programBytes += *n * 4;
    if (d.role != rt::BufferRole::Output)
      continue;
    rt::StatusOr<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(*n * 4);
    if (!b.ok())
      return fail(b.message());
    bindings[d.name] = b->data();
    outputBytes += *n * 4;
    outputSizes.push_back({d.name, *n});
    owned.push_back(std::move(*b));
  }
  cuda["program_bytes"] = programBytes;

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

  cudaStream_t stream;
  cudaStreamCreate(&stream);
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
  cuda["median_ms"] = median(ms);
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
      steps.push_back(llvm::json::Object{{"step", what}, {"median_ms", median(one)}});
    }
    cuda["step_ms"] = std::move(steps);
  }

  // Results back, compared with the reference.
  double worst = 0, maxAbs = 0;
  bool finite = true;
  outputs.clear();
  for (auto [i, out] : llvm::enumerate(outputSizes)) {
    std::vector<float> host(out.second);
    if (cudaMemcpy(host.data(), bindings[out.first], host.size() * 4,
                   cudaMemcpyDeviceToHost) != cudaSuccess)
      return fail("cannot download " + out.first);
    Tensor t;
    t.data.assign(host.begin(), host.end());
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
        return fail("internal: output " + out.first + " has " +
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
        worst = std::max(worst, d / (kTolerance * (1 + std::fabs(r.data[k]))));
      }
    }
    outputs.push_back(std::move(t));
  }
  bool match = finite && worst <= 1.0;
  if (reference) {
    cuda["tolerance"] = "|gnnc - ref| <= 1e-4 * (1 + |ref|)";
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
