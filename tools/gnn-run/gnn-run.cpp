//===- gnn-run.cpp - run a gnn function on a graph ------------------------===//
//
// Part of gnnc. Loads a `.mlir` file, a graph (data-set folder, edge-list file
// or synthetic generator) and seeded or given inputs, runs one function on a
// backend and prints a JSON summary of its outputs.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/Transforms/Autodiff.h"
#include "gnn/Graph/HostGraph.h"
#include "gnn/InitGNN.h"
#include "gnn/Reference/Evaluator.h"
#include "gnn/Tensor/HalfFloat.h"
#include "gnn/Tools/InputGuard.h"
#include "gnn/Tools/OutputFile.h"
#ifdef GNNC_HAVE_CUDA_RUNTIME
#include "CudaBackend.h"
#include "gnn/Runtime/CudaDriver.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <initializer_list>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::Required);
static cl::opt<std::string>
    graphSpec("graph", cl::Required,
              cl::desc("graph: data-set folder or name (cora), edge-list file, "
                       "powerlaw:nodes=N,edges=E[,seed=S][,alpha=A] or "
                       "batch:graphs=G[,min=A,max=B][,degree=D][,seed=S]"));
static cl::opt<std::string> functionName("function",
                                         cl::desc("function to run (default: "
                                                  "the only public one)"));
static cl::opt<std::string>
    backend("backend", cl::init("reference"),
            cl::desc("reference (CPU, double) or cuda (GPU)"));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("seed of the generated inputs"));
static cl::opt<std::string>
    inputsDir("inputs", cl::desc("read inputs from DIR/arg<K>.npy instead of "
                                 "generating them (K = argument number)"));
static cl::opt<std::string>
    dumpInputs("dump-inputs",
               cl::desc("write the inputs used to DIR/arg<K>.npy (float32, "
                        "exact for bf16 and f16 arguments; float64 for f64 "
                        "arguments)"));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("write each result to DIR/result<K>.npy (float64)"));
static cl::opt<std::string> dumpGraph(
    "dump-graph",
    cl::desc("write the graph (with --reorder, the renumbered graph) in a "
             "form --graph reads back as the same graph: to a folder (a name "
             "ending in '/', or an existing folder) as a data-set folder "
             "(meta.txt with nodes, edges and a bipartite graph's src_nodes "
             "and dst_nodes; edges.txt.gz; graph_ids.txt.gz of a batch; "
             "edge_types.txt.gz of a typed graph); to a file as a text edge "
             "list ('# nodes N', then 'src dst' lines) or, with a .npy name, "
             "its edge_index (2 x E, int64; no node count, and a graph of 2 "
             "edges is refused: [2, 2] is ambiguous); a file form refuses a "
             "batch, a bipartite or a typed graph, which it cannot hold"));
static cl::opt<std::string> reorder(
    "reorder",
    cl::desc("run on the graph with its nodes renumbered for locality: rcm "
             "(reverse Cuthill-McKee) or degree (highest first); node inputs "
             "(seeded, --inputs) are taken, and node results and gradients "
             "reported and written, in the graph's own order"));
static cl::opt<bool> compileOnly(
    "compile-only",
    cl::desc("cuda: generate and NVRTC-compile the kernels, do not run (no GPU "
             "needed)"));
static cl::opt<std::string> arch("arch",
                                 cl::desc("cuda: target, e.g. sm_90 (default: "
                                          "the device; sm_90 with --compile-only)"));
static cl::opt<int> reps("reps", cl::init(20),
                         cl::desc("cuda: timed repetitions (median reported)"));
static cl::opt<int> warmup("warmup", cl::init(5),
                           cl::desc("cuda: untimed runs before timing"));
static cl::opt<bool> profileSteps("profile-steps",
                                  cl::desc("cuda: also time each step"));
static cl::opt<bool> noCheck("no-check",
                             cl::desc("cuda: skip the reference comparison"));
static cl::opt<std::string> dumpProgram("dump-program",
                                        cl::desc("cuda: write the Program JSON"));
static cl::opt<std::string> dumpCuda("dump-cuda",
                                     cl::desc("cuda: write the CUDA source"));
static cl::opt<std::string> dumpMemoryPlan(
    "dump-memory-plan",
    cl::desc("cuda: write the temporaries' memory plan at the graph's sizes "
             "(JSON: arena bytes, each temp's live steps and offset)"));
static cl::opt<bool> grad(
    "grad",
    cl::desc("also run the backward: differentiate the function with respect "
             "to every float tensor argument (gnn-autodiff), run @f_fwd and "
             "@f_bwd with seeded output gradients, and report (and, with "
             "cuda, check) every argument's gradient"));

#ifdef GNNC_HAVE_CUDA_RUNTIME
/// The cuda backend's options from the command line.
static ::gnn::CudaRunOptions cudaRunOptions() {
  ::gnn::CudaRunOptions o;
  o.compileOnly = compileOnly;
  o.arch = arch;
  o.reps = reps;
  o.warmup = warmup;
  o.profileSteps = profileSteps;
  o.dumpProgram = dumpProgram;
  o.dumpSource = dumpCuda;
  o.dumpMemoryPlan = dumpMemoryPlan;
  return o;
}
#endif

/// Prints `message` as an error and returns the exit code 1.
static int fail(const llvm::Twine &message) {
  llvm::errs() << "gnn-run: error: " << message << "\n";
  return 1;
}

/// Creates the directory `path` (and its parents) unless it exists: 0, else
/// 1 with "cannot create 'PATH': REASON".
static int createDirectory(const std::string &path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    return fail("cannot create '" + path + "': " + ec.message());
  return 0;
}

/// Prints the JSON summary on stdout: `exitCode`, or 1 with "cannot write
/// '<stdout>': REASON" when it did not reach stdout.
static int printSummary(llvm::json::Object summary, int exitCode) {
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(summary)))
               << "\n";
  if (::gnn::flushStdout("gnn-run"))
    return 1;
  return exitCode;
}

static llvm::json::Object summarise(const ::gnn::Tensor &t) {
  double sum = 0, absSum = 0, lo = INFINITY, hi = -INFINITY;
  int64_t nonFinite = 0;
  for (double v : t.data) {
    if (!std::isfinite(v)) {
      ++nonFinite;
      continue;
    }
    sum += v;
    absSum += std::fabs(v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  llvm::json::Array shape;
  for (int64_t d : t.shape)
    shape.push_back(d);
  // JSON has no NaN or infinity: those are the strings "nan", "inf" and
  // "-inf" (printed as numbers, the summary was not JSON).
  llvm::json::Array head;
  for (size_t i = 0; i < std::min<size_t>(4, t.data.size()); ++i) {
    double v = t.data[i];
    if (std::isfinite(v))
      head.push_back(v);
    else
      head.push_back(std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
  }
  bool any = t.data.size() > static_cast<size_t>(nonFinite);
  return llvm::json::Object{{"shape", std::move(shape)},
                            {"sum", sum},
                            {"abs_sum", absSum},
                            {"min", any ? llvm::json::Value(lo) : nullptr},
                            {"max", any ? llvm::json::Value(hi) : nullptr},
                            {"non_finite", nonFinite},
                            {"first", std::move(head)}};
}

/// --dump-graph's folder form: a name ending in '/' or an existing folder.
static bool isFolderName(StringRef path) {
  return path.ends_with("/") || llvm::sys::fs::is_directory(path);
}

static int run();

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  ::gnn::registerInputLimitOption();
  cl::ParseCommandLineOptions(argc, argv, "gnnc runner\n");
  // Everything runs on a large stack with crashes contained; input that
  // would crash the parser is refused first (run()).
  return ::gnn::runContained("gnn-run", inputFile, argc, argv,
                             [] { return run(); });
}

/// The runner once the command line is parsed.
static int run() {
  bool cuda = backend == "cuda";
#ifdef GNNC_HAVE_CUDA_RUNTIME
  // Flags of the CUDA code generation, their ranges checked first for every
  // backend (a bad value is the command's error, not the IR's); given to
  // the reference, they are refused below.
  if (std::string bad = ::gnn::checkCodegenFlags(); !bad.empty())
    return fail(bad);
#endif
  if (cuda) {
#ifdef GNNC_HAVE_CUDA_RUNTIME
    // Report a missing driver or device before anything else.
    if (!compileOnly) {
      auto driver = ::gnn::runtime::CudaDriver::get();
      if (!driver.ok())
        return fail(driver.message());
    }
#else
    return fail("this build has no CUDA runtime (configured without CUDA)");
#endif
  }
  if (!cuda && backend != "reference")
    return fail("unknown backend '" + backend +
                "': expected 'reference' or 'cuda'");
  if (reps < 1)
    return fail("--reps: expected at least 1 timed run but got " +
                llvm::Twine(reps.getValue()));
  if (warmup < 0)
    return fail("--warmup: expected a nonnegative count but got " +
                llvm::Twine(warmup.getValue()));
  // The cuda backend's options do nothing on the reference: a CUDA source or
  // Program asked for there was never written, --compile-only ran the whole
  // reference, and the command still ended with 0.
  if (!cuda) {
    for (const cl::Option *o : std::initializer_list<const cl::Option *>{
             &compileOnly, &arch, &reps, &warmup, &profileSteps, &noCheck,
             &dumpProgram, &dumpCuda, &dumpMemoryPlan})
      if (o->getNumOccurrences())
        return fail("--" + o->ArgStr + " is an option of --backend=cuda but " +
                    "the backend is '" + backend + "' (which runs no CUDA " +
                    "code); add --backend=cuda or leave --" + o->ArgStr +
                    " out");
#ifdef GNNC_HAVE_CUDA_RUNTIME
    // (--split and --max-chunks shape the generated kernels: in range, they
    // were accepted here and did nothing. A build without CUDA has neither.)
    for (const std::string &name : ::gnn::codegenFlagsGiven())
      return fail("--" + name + " is an option of --backend=cuda but the " +
                  "backend is '" + backend + "' (which generates no " +
                  "kernels); add --backend=cuda or leave --" + name + " out");
#endif
  }

  DialectRegistry registry;
  ::gnn::registerGNNDialects(registry);
  mlir::gnn::registerVJPModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors point at the input's source lines; MLIR's generic dump of the
  // op ("see current operation") after a pass error is noise here.
  context.printOpOnDiagnostic(false);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      ::gnn::readInputFile(inputFile, ::gnn::maxInputBytes(), error);
  if (!file)
    return fail(error);
  if (!::gnn::precheckBuffer(*file))
    return 1;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  func::FuncOp func;
  if (!functionName.empty()) {
    func = module->lookupSymbol<func::FuncOp>(functionName);
    if (!func)
      return fail("no function '" + functionName + "' in " + inputFile);
  } else {
    for (auto f : module->getOps<func::FuncOp>()) {
      if (f.isExternal() || f.isPrivate())
        continue;
      if (func)
        return fail(inputFile + " has several public functions; choose one "
                                "with --function");
      func = f;
    }
    if (!func)
      return fail("no public function with a body in " + inputFile);
  }

  // --grad: @f_fwd and @f_bwd next to @f, with respect to every float
  // tensor argument. The forward outputs only the residuals nobody holds
  // already: those that are its arguments or results are read from there (as
  // the runtime's training entry and the Python package do).
  FailureOr<mlir::gnn::TrainingFunctions> training;
  if (grad) {
    if (!inputsDir.empty() || !outputDir.empty())
      return fail("--grad runs forward and backward; it does not combine "
                  "with --inputs or --output-dir");
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto t = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      if (t && isa<FloatType>(t.getElementType()))
        func.setArgAttr(i, mlir::gnn::kDifferentiableAttrName,
                        UnitAttr::get(&context));
    }
    training = mlir::gnn::differentiateForTraining(func);
    if (failed(training))
      return 1;
  }

  auto loadStart = std::chrono::steady_clock::now();
  ::gnn::GraphOrError graph = ::gnn::loadGraph(graphSpec);
  if (!graph.ok())
    return fail(graph.error);
  double loadMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - loadStart)
                      .count();

  // --reorder: the renumbered graph; node tensors cross the boundary in the
  // original order (permuteRows / unpermuteRows below).
  std::vector<int64_t> nodeOrder;
  double reorderMs = 0;
  if (!reorder.empty()) {
    std::optional<::gnn::NodeOrder> method = ::gnn::parseNodeOrder(reorder);
    if (!method)
      return fail("--reorder: expected one of " +
                  std::string(::gnn::nodeOrderNames()) + ", got '" +
                  reorder.getValue() + "'");
    if (!graph.graph.graphIds.empty())
      return fail("--reorder: '" + graph.graph.name +
                  "' is a batch of small graphs (graph ids), whose nodes stay "
                  "in graph order");
    if (graph.graph.bipartite())
      return fail("--reorder: '" + graph.graph.name +
                  "' is bipartite (two node sets, one order each); "
                  "renumbering one node set is not supported");
    auto start = std::chrono::steady_clock::now();
    nodeOrder = ::gnn::localityOrder(
        graph.graph.numNodes, graph.graph.src.data(), graph.graph.dst.data(),
        graph.graph.numEdges(), *method);
    graph.graph = ::gnn::renumberNodes(graph.graph, nodeOrder);
    reorderMs = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  }
  // Rows of node tensor `t` into the new order, and back.
  auto permuteRows = [&](::gnn::Tensor &t, bool back) {
    if (nodeOrder.empty() || t.shape.empty() ||
        t.shape[0] != static_cast<int64_t>(nodeOrder.size()))
      return;
    int64_t row = t.shape[0] ? t.numElements() / t.shape[0] : 0;
    ::gnn::HostDoubles out(t.data.size());
    for (size_t i = 0; i < nodeOrder.size(); ++i) {
      size_t from = back ? i : static_cast<size_t>(nodeOrder[i]);
      size_t to = back ? static_cast<size_t>(nodeOrder[i]) : i;
      std::copy_n(t.data.begin() + from * row, row, out.begin() + to * row);
    }
    t.data = std::move(out);
  };
  // The tensors of `fn`'s node results (their gradients, or the results
  // and gradients `fn` returns) into the new order, or back.
  auto permuteNodeResults = [&](func::FuncOp fn,
                                std::vector<::gnn::Tensor> &tensors,
                                bool back) {
    if (nodeOrder.empty())
      return;
    Operation *ret = fn.getBody().front().getTerminator();
    for (auto [k, t] : llvm::enumerate(tensors))
      if (k < ret->getNumOperands() &&
          mlir::gnn::inferDomain(ret->getOperand(k)) == mlir::gnn::Domain::Node)
        permuteRows(t, back);
  };

  if (!dumpGraph.empty()) {
    // A folder holds the whole graph; a file its edges only: a .npy edge
    // array as PyG's edge_index, anything else as text, which keeps the
    // node count too.
    std::string err;
    if (isFolderName(dumpGraph)) {
      err = ::gnn::writeDatasetDir(dumpGraph, graph.graph);
      if (!err.empty())
        return fail("--dump-graph: " + err);
    } else {
      if (std::string lost = ::gnn::edgeListOmissions(graph.graph);
          !lost.empty())
        return fail("--dump-graph: '" + dumpGraph.getValue() +
                    "' would be an edge list, which has no room for the "
                    "graph's " +
                    lost + "; give a folder (a name ending in '/') to write "
                    "a data-set folder that --graph reads back whole");
      bool npy = StringRef(dumpGraph).ends_with(".npy");
      if (npy && graph.graph.numEdges() == 2)
        return fail("--dump-graph: the graph has 2 edges, and a [2, 2] .npy "
                    "edge array is ambiguous (two rows of 'src dst' or the "
                    "sources then the destinations); --graph refuses it. "
                    "Give a name without .npy to write a text edge list");
      if (npy) {
        ::gnn::Tensor edges({2, graph.graph.numEdges()});
        for (int64_t e = 0; e < graph.graph.numEdges(); ++e) {
          edges.data[e] = static_cast<double>(graph.graph.src[e]);
          edges.data[graph.graph.numEdges() + e] =
              static_cast<double>(graph.graph.dst[e]);
        }
        err = ::gnn::writeNpy(dumpGraph, edges, ::gnn::NpyType::Int64);
      } else {
        err = ::gnn::writeEdgeList(dumpGraph, graph.graph);
      }
      if (!err.empty())
        return fail(err);
    }
  }

  FailureOr<std::vector<::gnn::ArgumentSpec>> specs =
      ::gnn::resolveArguments(func, graph.graph);
  if (failed(specs))
    return 1;

  // --compile-only needs no inputs (unless they are dumped); the reference
  // needs every tensor of the function in host memory.
  bool reference = !cuda || (!noCheck && !compileOnly);
  bool needInputs = !(cuda && compileOnly) || !dumpInputs.empty();
  if ((reference || needInputs) &&
      failed(::gnn::checkHostMemory(func, graph.graph,
                                    /*argumentsOnly=*/!reference)))
    return 1;
  std::vector<::gnn::Tensor> inputs;
  if (!needInputs) {
    // Nothing to read or generate.
  } else if (!inputsDir.empty()) {
    for (auto [i, spec] : llvm::enumerate(*specs)) {
      if (spec.isGraph)
        continue;
      ::gnn::Tensor t;
      std::string path = inputsDir + "/arg" + std::to_string(i) + ".npy";
      // The shape is checked (as the reference checks its inputs) before
      // the payload is read: a sparse file may hold a header of any size,
      // which was allocated (64 GiB: an out-of-memory abort).
      bool wrongShape = false;
      // (Named copies: a lambda capturing structured bindings is C++20.)
      size_t index = i;
      const ::gnn::ArgumentSpec &want = spec;
      std::string err = ::gnn::readNpy(
          path, t, [&](const std::vector<int64_t> &shape) -> std::string {
            if (shape == want.shape)
              return "";
            wrongShape = true;
            func.emitError() << ::gnn::wrongInputShape(index, want, graph.graph.name,
                                                       shape)
                             << " ('" << path << "')";
            return "wrong shape";
          });
      if (wrongShape)
        return 1;
      if (!err.empty())
        return fail(err);
      // An f32 argument holds float32 values: a float64 .npy is rounded
      // (it was used at full precision, unlike the CUDA backend's and
      // Python's float32 tensors, and --dump-inputs wrote other values than
      // those used). A bf16 or f16 argument holds values of its type (.npy
      // files carry them as float32, exactly).
      if (spec.element == "f32")
        for (double &x : t.data)
          x = static_cast<double>(static_cast<float>(x));
      if (spec.element == "bf16" || spec.element == "f16")
        for (double &x : t.data)
          x = ::gnn::roundToHalf(x, spec.element == "bf16"
                                        ? ::gnn::HalfKind::BF16
                                        : ::gnn::HalfKind::F16);
      inputs.push_back(std::move(t));
    }
  } else {
    inputs = ::gnn::makeSeededInputs(*specs, seed);
  }
  if (!dumpInputs.empty()) {
    if (int code = createDirectory(dumpInputs))
      return code;
    size_t next = 0;
    for (auto [i, spec] : llvm::enumerate(*specs)) {
      if (spec.isGraph)
        continue;
      auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      bool f64 = type && type.getElementType().isF64();
      std::string err = ::gnn::writeNpy(
          dumpInputs + "/arg" + std::to_string(i) + ".npy", inputs[next++],
          f64 ? ::gnn::NpyType::Float64 : ::gnn::NpyType::Float32);
      if (!err.empty())
        return fail(err);
    }
  }

  for (auto [t, spec] :
       llvm::zip(inputs, llvm::make_filter_range(
                             *specs, [](const auto &s) { return !s.isGraph; })))
    if (spec.role == "node")
      permuteRows(t, /*back=*/false);

  llvm::json::Object summary;
  if (!nodeOrder.empty())
    summary["reorder"] = llvm::json::Object{{"method", reorder.getValue()},
                                            {"order_ms", reorderMs}};
  FailureOr<std::vector<::gnn::Tensor>> outputs = std::vector<::gnn::Tensor>();
  double runMs = 0;
  if (grad) {
    // Forward (results and residuals), then the backward on the residuals
    // and seeded output gradients; each against the reference on the same
    // inputs (with cuda, the backward's reference reads the GPU residuals,
    // or its own forward's where the gradients differ from those).
    const mlir::gnn::TrainingFunctions &t = *training;
    unsigned numResults = t.numResults;
    double referenceMs = 0;
    std::vector<::gnn::Tensor> fwdOut;
    if (reference) {
      auto start = std::chrono::steady_clock::now();
      FailureOr<std::vector<::gnn::Tensor>> fo =
          ::gnn::evaluateReference(t.forward, graph.graph, inputs);
      if (failed(fo))
        return 1;
      fwdOut = std::move(*fo);
      referenceMs += std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    }
    // Output gradients: seeded like inputs (a different seed), of their
    // results' types (a bf16 result's gradient holds bf16 values).
    auto seedOutputGrads =
        [&](const std::vector<std::vector<int64_t>> &shapes) {
          std::vector<::gnn::ArgumentSpec> dySpecs;
          func::FuncOp fwd = t.forward;
          for (auto [i, shape] : llvm::enumerate(shapes)) {
            Type r = i < fwd.getNumResults()
                         ? getElementTypeOrSelf(fwd.getResultTypes()[i])
                         : Type();
            std::string element = r && r.isBF16()  ? "bf16"
                                  : r && r.isF16() ? "f16"
                                                   : "f32";
            dySpecs.push_back({false, shape, "node", element});
          }
          std::vector<::gnn::Tensor> dys =
              ::gnn::makeSeededInputs(dySpecs, seed + 1);
          // Seeded in the original node order, like the inputs.
          permuteNodeResults(fwd, dys, /*back=*/false);
          return dys;
        };
    // The reference backward: residuals from the forward's arguments and
    // outputs, then the output gradients.
    auto referenceGrads = [&](const std::vector<::gnn::Tensor> &fo,
                              const std::vector<::gnn::Tensor> &dys)
        -> FailureOr<std::vector<::gnn::Tensor>> {
      auto start = std::chrono::steady_clock::now();
      std::vector<::gnn::Tensor> bwdIn;
      for (mlir::gnn::ResidualSource r : t.residuals) {
        if (r.kind == mlir::gnn::ResidualSource::Kind::Output) {
          bwdIn.push_back(fo[r.index]);
          continue;
        }
        // The argument's place among the inputs (graphs have none).
        size_t k = 0;
        for (unsigned a = 0; a < r.index; ++a)
          k += !(*specs)[a].isGraph;
        bwdIn.push_back(inputs[k]);
      }
      bwdIn.insert(bwdIn.end(), dys.begin(), dys.end());
      FailureOr<std::vector<::gnn::Tensor>> g =
          ::gnn::evaluateReference(t.backward, graph.graph, bwdIn);
      referenceMs += std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();
      return g;
    };
    std::vector<::gnn::Tensor> grads;
    int exitCode = 0;
    if (cuda) {
#ifdef GNNC_HAVE_CUDA_RUNTIME
      ::gnn::CudaRunOptions o = cudaRunOptions();
      ::gnn::TrainingCheck check;
      check.forward = reference ? &fwdOut : nullptr;
      check.seedOutputGrads = seedOutputGrads;
      if (reference)
        check.referenceGrads = referenceGrads;
      std::vector<::gnn::Tensor> gpuOut;
      exitCode = ::gnn::runCudaTraining(*module, t, graph.graph, inputs, check,
                                        o, summary, gpuOut, grads);
      if (exitCode == 1)
        return 1;
      fwdOut = std::move(gpuOut);
#endif
    } else {
      std::vector<std::vector<int64_t>> shapes;
      for (unsigned i = 0; i < numResults; ++i)
        shapes.push_back(fwdOut[i].shape);
      FailureOr<std::vector<::gnn::Tensor>> g =
          referenceGrads(fwdOut, seedOutputGrads(shapes));
      if (failed(g))
        return 1;
      grads = std::move(*g);
    }
    summary["function"] = func.getSymName().str();
    summary["backend"] = backend.getValue();
    if (!compileOnly) {
      permuteNodeResults(t.forward, fwdOut, /*back=*/true);
      permuteNodeResults(t.backward, grads, /*back=*/true);
      llvm::json::Array outs, gs;
      for (unsigned i = 0; i < numResults; ++i)
        outs.push_back(summarise(fwdOut[i]));
      for (const ::gnn::Tensor &g : grads)
        gs.push_back(summarise(g));
      summary["seed"] = static_cast<int64_t>(seed);
      summary["outputs"] = std::move(outs);
      summary["gradients"] = std::move(gs);
      summary["graph_load_ms"] = loadMs;
      summary["reference_ms"] = referenceMs;
    }
    // The backward's residual arguments, and how many of them the forward
    // outputs (the others are its arguments or results).
    summary["residuals"] = static_cast<int64_t>(t.residuals.size());
    summary["residual_outputs"] = static_cast<int64_t>(
        training->forward.getNumResults() - numResults);
    return printSummary(std::move(summary), exitCode);
  }
  if (reference) {
    auto start = std::chrono::steady_clock::now();
    outputs = ::gnn::evaluateReference(func, graph.graph, inputs);
    if (failed(outputs))
      return 1;
    runMs = std::chrono::duration<double, std::milli>(
                std::chrono::steady_clock::now() - start)
                .count();
  }
  int exitCode = 0;
#ifdef GNNC_HAVE_CUDA_RUNTIME
  if (cuda) {
    ::gnn::CudaRunOptions o = cudaRunOptions();
    std::vector<::gnn::Tensor> gpuOutputs;
    exitCode = ::gnn::runCudaBackend(*module, func, graph.graph, inputs,
                                     reference ? &*outputs : nullptr, o,
                                     summary, gpuOutputs);
    if (exitCode == 1)
      return 1;
    outputs = std::move(gpuOutputs);
  }
#endif

  if (!compileOnly)
    permuteNodeResults(func, *outputs, /*back=*/true);
  if (!outputDir.empty()) {
    if (int code = createDirectory(outputDir))
      return code;
    for (auto [i, t] : llvm::enumerate(*outputs)) {
      std::string err = ::gnn::writeNpy(outputDir + "/result" +
                                          std::to_string(i) + ".npy",
                                      t, ::gnn::NpyType::Float64);
      if (!err.empty())
        return fail(err);
    }
  }

  ::gnn::GraphStats stats = ::gnn::computeStats(graph.graph);
  auto statisticsJson = [](const ::gnn::GraphStats &s) -> llvm::json::Value {
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(s.toJson());
    if (!v) {
      llvm::consumeError(v.takeError());
      return nullptr;
    }
    return std::move(*v);
  };
  llvm::json::Array outs, args;
  for (const ::gnn::Tensor &t : *outputs)
    outs.push_back(summarise(t));
  for (const ::gnn::ArgumentSpec &s : *specs) {
    llvm::json::Array shape;
    for (int64_t d : s.shape)
      shape.push_back(d);
    args.push_back(llvm::json::Object{{"role", s.role}, {"shape", std::move(shape)}});
  }
  llvm::json::Object fields{
      {"function", func.getSymName().str()},
      {"backend", backend.getValue()},
      {"graph",
       llvm::json::Object{{"name", graph.graph.name},
                          {"nodes", stats.nodes},
                          {"edges", stats.edges},
                          {"graphs", stats.graphs},
                          {"max_in_degree", stats.maxInDegree},
                          {"isolated_nodes", stats.isolatedNodes},
                          {"self_loops", stats.selfLoops},
                          // Everything schedules read, and the same in the
                          // form gnn-opt's `stats` options take.
                          {"statistics", statisticsJson(stats)},
                          {"stats_option", stats.toOption()}}},
      {"seed", static_cast<int64_t>(seed)},
      {"arguments", std::move(args)},
      {"outputs", std::move(outs)},
      {"graph_load_ms", loadMs},
      {"reference_ms", runMs}};
  for (auto &kv : fields)
    summary[kv.first] = std::move(kv.second);
  return printSummary(std::move(summary), exitCode);
}
