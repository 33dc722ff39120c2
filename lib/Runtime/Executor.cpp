//===- Executor.cpp - running a Program -----------------------------------===//
//
// Part of gnnc. Everything that can be resolved once (kernels, buffer slots,
// formulas) is resolved in create(), and memory plans once per graph size;
// run() only evaluates formulas and launches, to keep the host cost of a
// launch low. run() writes no state of the Executable but the caches (plans,
// owned workspaces, replays), behind a mutex: pointers and kernel arguments
// live on the caller's stack, so runs on several streams can overlap.
//
// A whole run whose launches repeat (the same graph, sizes and buffers: a
// training loop's steady state) is captured once as a CUDA graph and from
// then on replayed with one cudaGraphLaunch: the same kernels with the same
// arguments in the same order, so the same results bit for bit, for the
// host cost of one launch instead of one per step.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/Environment.h"
#include "gnn/Runtime/Jit.h"
#include "gnn/Runtime/Library.h"
#include "gnn/Runtime/Module.h"
#include "gnn/Tensor/HalfFloat.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <list>
#include <mutex>

#include <unistd.h>

using namespace gnn::runtime;

struct Executable::Impl {
  Program program;
  /// One per compiled source unit.
  std::vector<std::unique_ptr<Module>> modules;
  std::map<std::string, Kernel> kernels;
  std::map<std::string, size_t> slotOf; ///< buffer name -> index
  /// Per launch step: the kernel (parallel to program.steps).
  std::vector<Kernel *> launches;
  /// Per step, per kernel argument: the buffer slot of a Buffer argument.
  std::vector<std::vector<size_t>> argSlots;
  /// The most arguments of one launch (the size of a run's argument storage).
  size_t maxArgs = 0;
  /// Per step i: the steps j > i (launches or row-split gemms) that overlap
  /// steps i .. j - 1 (overlapsOf), forked onto a second stream before step
  /// i, in program order; empty where none starts at i.
  std::vector<std::vector<size_t>> forkedAt;
  /// Per step j: the first step of the window j overlaps (forkedAt's i);
  /// SIZE_MAX where j overlaps nothing.
  std::vector<size_t> windowFrom;

  /// A workspace the Executable owns for one stream; `mutex` is held by a run
  /// that uses it from binding to its last enqueued step.
  struct OwnedWorkspace {
    std::mutex mutex;
    DeviceBuffer buffer;
  };
  /// Guards the caches below and Kernel::allowDynamicShared.
  mutable std::mutex mutex;
  using ScopeKey = std::array<int64_t, 8>;
  /// Memory plans per graph size (cleared when it grows large: graphs of
  /// ever new sizes, as in mini-batch training, must not grow it forever).
  mutable std::map<ScopeKey, std::shared_ptr<const MemoryPlan>> plans;
  std::map<cudaStream_t, std::shared_ptr<OwnedWorkspace>> owned;

  /// Whole runs captured as CUDA graphs, each under the key of everything
  /// its launches were made of (runKey): a run with the same key launches
  /// the same kernels with the same arguments, so it replays the graph.
  /// A run's key and its hash (compared first: the keys of one graph's runs
  /// share their first entries).
  struct Key {
    std::vector<int64_t> key;
    uint64_t hash = 0;
    bool operator==(const Key &o) const {
      return hash == o.hash && key == o.key;
    }
  };
  struct Replay {
    Key key;
    cudaGraphExec_t exec = nullptr;
  };
  /// Most recently used first; at most kReplays (guarded by `mutex`).
  std::list<Replay> replays;
  /// Keys seen once and not captured (a run is captured the second time
  /// its key is seen, so one-off runs cost no capture); at most kSeen.
  std::list<Key> seen;
  /// Set when a capture failed: this Executable runs step by step from
  /// then on.
  std::atomic<bool> replayOff{false};
  /// Runs launched as a graph (graphLaunches()), graphs captured.
  size_t graphLaunches = 0, captures = 0;
  /// More keys than kReplays in turn (a model of more than kReplays layers
  /// of one function: each layer's run is a key of its own) would capture
  /// on every run: once more than kReplays were captured with fewer than
  /// two launches each, the Executable runs step by step from then on. A
  /// kept graph holds its launches and their arguments, no buffers (those
  /// are the run's bindings and workspace); kSeen keeps a whole cycle of
  /// kReplays keys between a key's first and second run.
  static constexpr size_t kReplays = 64, kSeen = 2 * kReplays;
  /// Whether runs may be replayed: some step, none through cuSPARSE (its
  /// plans are host state a replay would not see). A run of one launch is
  /// replayed only with a guard (three launches then).
  bool replayable = false;
  /// The graph arrays the launches read (runKey's part of the graph), by
  /// graphArrayId.
  std::vector<int> graphArrays;
  /// The input and output buffers (boundNames), and each one's slot.
  std::vector<std::string> boundNames;
  std::vector<size_t> boundSlots;
  ~Impl() {
    for (Replay &r : replays)
      (void)cudaGraphExecDestroy(r.exec);
  }
  /// runKey: what the launches of a whole run on `graph` with `pointers`
  /// (bind's) are made of.
  Key runKey(const Graph &graph, const FormulaScope &scope,
             const std::vector<void *> &pointers,
             const RunGuard *guard) const;
  /// Runs `enqueue`'s steps on `stream` through the replay of the graph of
  /// the run's key (runKey): launched where captured, captured the second
  /// time a key is seen, else (and inside a capture of the caller's, or
  /// once a capture failed) `enqueue(stream)`, step by step.
  Status replay(const Graph &graph, const FormulaScope &scope,
                const std::vector<void *> &pointers, const RunGuard *guard,
                cudaStream_t stream,
                const std::function<Status(cudaStream_t)> &enqueue);

  StatusOr<std::shared_ptr<const MemoryPlan>>
  planFor(const FormulaScope &scope) const;
  Status bind(const std::vector<void *> &bound, const FormulaScope &scope,
              const MemoryPlan &plan, char *workspace,
              std::vector<void *> &pointers) const;
  /// runSteps with the bindings as runBound takes them.
  Status runBound(const Graph &graph, const std::vector<void *> &bound,
                  cudaStream_t stream, size_t first, size_t count,
                  void *workspace, const RunGuard *guard);
  void *graphArray(const Graph &graph, const std::string &name) const;
  void *graphArray(const Graph &graph, int id) const;
  /// Checks that `graph` has the index width and edge order the program was
  /// generated for.
  Status checkGraph(const Graph &graph) const;
  /// Makes `own` the workspace this Executable owns for `stream`, of at
  /// least `arena` bytes, locked in `ownLock`; grows it only once the stream
  /// has finished with it.
  Status ownWorkspace(cudaStream_t stream, size_t arena,
                      std::shared_ptr<OwnedWorkspace> &own,
                      std::unique_lock<std::mutex> &ownLock);
  struct StepRunner;
};

/// The graph arrays a kernel may read, by name; graphArrayId's ids index
/// this table (-1: no such array).
static const char *const kGraphArrays[] = {
    "csr_row_ptr", "csr_col",   "csr_edge",   "csr_dst",
    "csc_col_ptr", "csc_row",   "csc_edge",   "csc_to_csr",
    "in_degree",   "out_degree", "csr_rows_by_degree", "csc_cols_by_degree",
    "graph_ptr",   "csr_type"};

static int graphArrayId(const std::string &name) {
  for (size_t i = 0; i < std::size(kGraphArrays); ++i)
    if (name == kGraphArrays[i])
      return int(i);
  return -1;
}

Executable::Executable() : impl(new Impl) {}
Executable::~Executable() {
  // Owned workspaces are freed in the legacy stream's order, which does not
  // wait for non-blocking streams: wait for the device first.
  if (!impl->owned.empty())
    (void)cudaDeviceSynchronize();
}

const Program &Executable::program() const { return impl->program; }

size_t Executable::graphLaunches() const {
  std::lock_guard<std::mutex> lock(impl->mutex);
  return impl->graphLaunches;
}

std::map<std::string, KernelInfo> Executable::kernelInfo() const {
  std::map<std::string, KernelInfo> out;
  for (auto &[name, k] : impl->kernels)
    out[name] = k.info();
  return out;
}

StatusOr<std::unique_ptr<Executable>>
Executable::create(const Program &program, Compiler &compiler,
                   const std::string &arch) {
  GNN_RETURN_IF_ERROR(program.verify());
  std::vector<CompileResult> compiled;
  if (!program.kernels.empty()) {
    // Each unit compiled on its own (in parallel, cached one by one).
    StatusOr<std::vector<CompileResult>> units =
        compileProgram(program, compiler, arch);
    if (!units.ok())
      return units.error();
    compiled = std::move(*units);
  }
  return load(program, compiled);
}

StatusOr<std::unique_ptr<Executable>>
Executable::load(const Program &program,
                 const std::vector<CompileResult> &compiled) {
  GNN_RETURN_IF_ERROR(program.verify());
  std::unique_ptr<Executable> ex(new Executable);
  Impl &m = *ex->impl;
  m.program = program;
  if (!program.kernels.empty()) {
    if (compiled.size() != program.units.size())
      return Status::error("program '" + program.name + "' has " +
                           std::to_string(program.units.size()) +
                           " source units but " +
                           std::to_string(compiled.size()) +
                           " compile results were given");
    // Each unit loaded as its own module.
    std::map<std::string, const Module *> moduleOf;
    for (size_t u = 0; u < program.units.size(); ++u) {
      const CompileResult &c = compiled[u];
      if (!c.cubin)
        continue;
      StatusOr<std::unique_ptr<Module>> module = Module::load(*c.cubin);
      if (!module.ok())
        return module.error();
      for (const std::string &name : program.units[u].kernels)
        moduleOf[name] = module->get();
      m.modules.push_back(std::move(*module));
    }
    for (const std::string &name : program.kernels) {
      auto module = moduleOf.find(name);
      if (module == moduleOf.end())
        return Status::error("kernel '" + name + "' of program '" +
                             program.name + "' was not compiled");
      StatusOr<Kernel> k = module->second->kernel(name);
      if (!k.ok())
        return k.error();
      m.kernels[name] = *k;
    }
  }
  for (size_t i = 0; i < program.buffers.size(); ++i)
    m.slotOf[program.buffers[i].name] = i;
  m.replayable = !program.steps.empty();
  for (const Step &step : program.steps) {
    if (std::holds_alternative<SpmmStep>(step))
      m.replayable = false;
    if (auto *l = std::get_if<LaunchStep>(&step))
      for (const KernelArg &a : l->args)
        if (a.kind == KernelArg::Kind::Graph) {
          int id = graphArrayId(a.name);
          if (std::find(m.graphArrays.begin(), m.graphArrays.end(), id) ==
              m.graphArrays.end())
            m.graphArrays.push_back(id);
        }
  }
  for (size_t i = 0; i < program.buffers.size(); ++i)
    if (program.buffers[i].role != BufferRole::Temp) {
      m.boundNames.push_back(program.buffers[i].name);
      m.boundSlots.push_back(i);
    }
  m.launches.assign(program.steps.size(), nullptr);
  m.argSlots.assign(program.steps.size(), {});
  m.forkedAt.assign(program.steps.size(), {});
  m.windowFrom.assign(program.steps.size(), SIZE_MAX);
  for (const Program::OverlapWindow &w : program.overlapWindows()) {
    m.forkedAt[w.first].push_back(w.last);
    m.windowFrom[w.last] = w.first;
  }
  for (size_t i = 0; i < program.steps.size(); ++i) {
    auto *s = std::get_if<LaunchStep>(&program.steps[i]);
    if (!s)
      continue;
    m.launches[i] = &m.kernels[s->kernel];
    m.maxArgs = std::max(m.maxArgs, s->args.size());
    m.argSlots[i].assign(s->args.size(), 0);
    for (size_t a = 0; a < s->args.size(); ++a) {
      if (s->args[a].kind != KernelArg::Kind::Buffer)
        continue;
      auto slot = m.slotOf.find(s->args[a].name);
      if (slot == m.slotOf.end())
        return Status::error("kernel argument '" + s->args[a].name +
                             "' of program '" + program.name +
                             "' names no buffer");
      m.argSlots[i][a] = slot->second;
    }
  }
  return ex;
}

StatusOr<std::shared_ptr<const MemoryPlan>>
Executable::Impl::planFor(const FormulaScope &scope) const {
  ScopeKey key{scope.nodes,         scope.edges,
               scope.graphs,        scope.maxInDegree,
               scope.maxOutDegree,  scope.largestGraph,
               scope.sourceNodes(), scope.destinationNodes()};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end())
      return it->second;
  }
  StatusOr<MemoryPlan> plan = planMemory(program, scope);
  if (!plan.ok())
    return plan.error();
  auto shared = std::make_shared<const MemoryPlan>(std::move(*plan));
  std::lock_guard<std::mutex> lock(mutex);
  if (plans.size() >= 64)
    plans.clear();
  plans.emplace(key, shared);
  return shared;
}

static FormulaScope scopeOf(const Graph &graph) {
  const ::gnn::GraphStats &st = graph.statistics();
  return FormulaScope{st.nodes,        st.edges,        st.graphs,
                      st.maxInDegree,  st.maxOutDegree, st.largestGraph,
                      graph.numSrc(),  graph.numDst()};
}

StatusOr<std::shared_ptr<const MemoryPlan>>
Executable::memoryPlan(const Graph &graph) const {
  return impl->planFor(scopeOf(graph));
}

StatusOr<size_t> Executable::workspaceBytes(const Graph &graph) const {
  StatusOr<std::shared_ptr<const MemoryPlan>> plan = memoryPlan(graph);
  if (!plan.ok())
    return plan.error();
  return (*plan)->arenaBytes;
}

void *Executable::Impl::graphArray(const Graph &g, const std::string &n) const {
  return graphArray(g, graphArrayId(n));
}

void *Executable::Impl::graphArray(const Graph &g, int id) const {
  switch (id) {
  case 0: return const_cast<void *>(g.csrRowPtr());
  case 1: return const_cast<void *>(g.csrCol());
  case 2: return const_cast<void *>(g.csrEdge());
  case 3: return const_cast<void *>(g.csrDst());
  case 4: return const_cast<void *>(g.cscColPtr());
  case 5: return const_cast<void *>(g.cscRow());
  case 6: return const_cast<void *>(g.cscEdge());
  case 7: return const_cast<void *>(g.cscToCsr());
  case 8: return const_cast<int32_t *>(g.inDegree());
  case 9: return const_cast<int32_t *>(g.outDegree());
  case 10: return const_cast<void *>(g.csrRowsByDegree());
  case 11: return const_cast<void *>(g.cscColsByDegree());
  case 12: return const_cast<void *>(g.graphOffsets());
  case 13: return const_cast<void *>(g.csrType());
  default: return nullptr;
  }
}

Status Executable::Impl::bind(const std::vector<void *> &bound,
                              const FormulaScope &scope, const MemoryPlan &plan,
                              char *workspace,
                              std::vector<void *> &pointers) const {
  if (bound.size() != boundSlots.size())
    return Status::error("program '" + program.name + "' binds " +
                         std::to_string(boundSlots.size()) +
                         " input and output buffers but " +
                         std::to_string(bound.size()) + " pointers were given");
  pointers.assign(program.buffers.size(), nullptr);
  std::vector<int64_t> sizes(program.buffers.size(), 0);
  for (size_t j = 0; j < boundSlots.size(); ++j) {
    size_t i = boundSlots[j];
    const BufferDecl &b = program.buffers[i];
    StatusOr<int64_t> bytesOr = bufferBytes(b, scope);
    if (!bytesOr.ok())
      return Status(bytesOr.error());
    int64_t bytes = *bytesOr;
    if (!bound[j] && bytes)
      return Status::error("buffer '" + b.name + "' is bound to a null pointer");
    pointers[i] = bound[j];
    sizes[i] = bytes;
  }
  // Temps: their place in the workspace, or in the output holding them
  // before it is written (an unused temp keeps null).
  std::vector<bool> holds(program.buffers.size(), false);
  for (const MemoryPlan::Temp &t : plan.temps) {
    if (!t.range.used)
      continue;
    if (t.host == MemoryPlan::Temp::kArena) {
      if (workspace)
        pointers[t.buffer] = workspace + t.offset;
      continue;
    }
    pointers[t.buffer] = static_cast<char *>(pointers[t.host]) + t.offset;
    holds[t.host] = true;
  }
  // An output holding temps is written before the program writes it: it
  // must be aligned for the kernels' vector accesses and must not be an
  // input's memory.
  for (size_t o = 0; o < program.buffers.size(); ++o) {
    if (!holds[o])
      continue;
    const std::string &name = program.buffers[o].name;
    auto start = reinterpret_cast<uintptr_t>(pointers[o]);
    if (start % 16)
      return Status::error("output '" + name + "' of program '" +
                           program.name +
                           "' holds temporaries before it is written and "
                           "must be 16-byte aligned");
    for (size_t i = 0; i < program.buffers.size(); ++i) {
      if (program.buffers[i].role != BufferRole::Input || !sizes[i])
        continue;
      auto in = reinterpret_cast<uintptr_t>(pointers[i]);
      if (in < start + uintptr_t(sizes[o]) && start < in + uintptr_t(sizes[i]))
        return Status::error("output '" + name + "' of program '" +
                             program.name + "' overlaps input '" +
                             program.buffers[i].name +
                             "': it holds temporaries before it is written");
    }
  }
  return Status();
}

Status Executable::run(const Graph &graph,
                       const std::map<std::string, void *> &bindings,
                       cudaStream_t stream, void *workspace,
                       const RunGuard *guard) {
  return runSteps(graph, bindings, stream, 0, impl->program.steps.size(),
                  workspace, guard);
}

Status Executable::Impl::checkGraph(const Graph &graph) const {
  if (!program.kernels.empty() && graph.indexBits() != program.indexBits)
    return Status::error("program '" + program.name + "' was generated for " +
                         std::to_string(program.indexBits) +
                         "-bit graph indices but the graph has " +
                         std::to_string(graph.indexBits()) + "-bit ones");
  if (program.csrOrderEdges && !graph.statistics().csrOrder)
    return Status::error(
        "program '" + program.name +
        "' was generated for graphs whose edges are given in CSR order "
        "(sorted by destination, then source) but this graph's are not: "
        "compile it with the graph's statistics");
  if (program.relations && !graph.typed())
    return Status::error("program '" + program.name +
                         "' reads edge types (a typed graph's relation ids) "
                         "but the graph has none");
  if (program.relations && graph.numRelations() > program.relations)
    return Status::error(
        "program '" + program.name + "' was generated for " +
        std::to_string(program.relations) +
        " relations but the graph has relation id " +
        std::to_string(graph.numRelations() - 1) +
        " (ids must be below the relation count)");
  for (const auto &[count, value] : program.fixedCounts) {
    int64_t actual = count == "node"   ? graph.numNodes()
                     : count == "edge" ? graph.numEdges()
                     : count == "src"  ? graph.numSrc()
                                       : graph.numDst();
    if (actual != value)
      return Status::error(
          "program '" + program.name + "' holds " + count +
          " tensors of " + std::to_string(value) +
          " rows (static leading dimensions) but the graph has " +
          std::to_string(actual) + " " +
          (count == "src"   ? "source nodes"
           : count == "dst" ? "destination nodes"
                            : count + "s") +
          ": write the dimension as ? to take any graph");
  }
  if (program.maxGraphNodes &&
      graph.statistics().largestGraph > program.maxGraphNodes)
    return Status::error(
        "program '" + program.name + "' was generated for graphs of at most " +
        std::to_string(program.maxGraphNodes) +
        " nodes each (its block-per-graph kernels hold a graph in shared "
        "memory) but this graph's largest has " +
        std::to_string(graph.statistics().largestGraph) +
        " nodes: compile it with the graph's statistics");
  return Status();
}

Status Executable::Impl::ownWorkspace(cudaStream_t stream, size_t arena,
                                      std::shared_ptr<OwnedWorkspace> &own,
                                      std::unique_lock<std::mutex> &ownLock) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::shared_ptr<OwnedWorkspace> &slot = owned[stream];
    if (!slot)
      slot = std::make_shared<OwnedWorkspace>();
    own = slot;
  }
  ownLock = std::unique_lock<std::mutex>(own->mutex);
  if (own->buffer.size() >= arena)
    return Status();
  if (own->buffer.data()) {
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
      return Status::error(std::string("cudaStreamSynchronize before "
                                       "growing the workspace: ") +
                           cudaGetErrorName(e));
  }
  own->buffer = DeviceBuffer();
  StatusOr<DeviceBuffer> buf = DeviceBuffer::allocate(arena);
  if (!buf.ok())
    return Status(buf.error())
        .withContext("workspace of program '" + program.name + "' (" +
                     std::to_string(arena) + " bytes)");
  own->buffer = std::move(*buf);
  // DeviceBuffer allocates in the legacy stream's order, which a
  // non-blocking `stream` does not wait for (rare: only when growing).
  cudaError_t e = cudaStreamSynchronize(nullptr);
  if (e != cudaSuccess)
    return Status::error(std::string("cudaStreamSynchronize after "
                                     "allocating the workspace: ") +
                         cudaGetErrorName(e));
  return Status();
}

namespace {
std::atomic<int64_t> sideStreamCount{0};

/// A second stream and the two events that fork and join it, per host
/// thread and device (a run's launches go to the caller's stream from one
/// thread; several threads each have their own, so no other run records
/// these events between a record and its wait). Kept for the thread's life.
struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;

  /// Destroys what was made (errors ignored: at the process's exit the
  /// CUDA runtime may be gone already).
  void release() {
    if (join)
      (void)cudaEventDestroy(join);
    if (fork)
      (void)cudaEventDestroy(fork);
    if (stream)
      (void)cudaStreamDestroy(stream);
    (void)cudaGetLastError();
    *this = SideStream();
  }
};

/// A thread's SideStreams by device, destroyed when the thread ends: a
/// thread pool, or a loader's workers started per epoch, would otherwise
/// leave a stream and two events per thread behind. A captured CUDA graph
/// holds no reference to them (a capture's event records and waits become
/// the graph's edges), and work still queued finishes first
/// (cudaStreamDestroy returns at once and frees the stream after it). A
/// forked child that ends through exit() leaves its parent's alone: they
/// are not its own (CUDA is unusable in a child of a process that used it).
struct ThreadSideStreams {
  std::vector<SideStream> slots;
  pid_t owner = getpid();
  ~ThreadSideStreams() {
    if (getpid() != owner)
      return;
    for (SideStream &s : slots)
      if (s.stream) {
        s.release();
        sideStreamCount.fetch_sub(1, std::memory_order_relaxed);
      }
  }
};

/// The calling thread's SideStream on the current device, made on first use
/// unless `mayCreate` is false (inside a capture: nothing is created there);
/// null when there is none or it cannot be made (the launches then run one
/// after another, which is always right).
SideStream *sideStream(bool mayCreate) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0) {
    (void)cudaGetLastError();
    return nullptr;
  }
  thread_local ThreadSideStreams streams;
  std::vector<SideStream> &slots = streams.slots;
  if (static_cast<size_t>(device) >= slots.size()) {
    if (!mayCreate)
      return nullptr;
    slots.resize(device + 1);
  }
  SideStream &s = slots[device];
  if (s.stream)
    return &s;
  if (!mayCreate)
    return nullptr;
  if (cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking) !=
          cudaSuccess ||
      cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming) !=
          cudaSuccess ||
      cudaEventCreateWithFlags(&s.join, cudaEventDisableTiming) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    s.release();
    return nullptr;
  }
  sideStreamCount.fetch_add(1, std::memory_order_relaxed);
  return &s;
}

Status checkFork(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return Status();
  return Status::error(std::string(what) + " (a launch beside others): " +
                       cudaGetErrorName(e));
}
} // namespace

int64_t gnn::runtime::liveSideStreams() {
  return sideStreamCount.load(std::memory_order_relaxed);
}

/// Enqueues the steps of one run. It only refers to what the run keeps on
/// the caller's stack (the bound pointers, the argument storage), so that
/// runs on several streams can overlap; a step costs no allocation.
struct Executable::Impl::StepRunner {
  const Impl &m;
  const Graph &graph;
  const FormulaScope &scope;
  /// Per buffer slot: its memory in this run.
  const std::vector<void *> &pointers;
  cudaStream_t stream;
  /// Argument storage of one launch, reused by the next (launches copy it),
  /// and a pointer to each of its slots.
  std::vector<uint64_t> &storage;
  std::vector<void *> &argv;

  /// Enqueues step `i` of the program.
  Status run(size_t i);

private:
  /// Writes the arguments of launch step `i` into `storage`.
  Status packArgs(const LaunchStep &s, size_t i);
  /// Enqueues step `i`, `s`, of each kind: a kernel launch (none on an
  /// empty grid) or a library call; `i` names the step in an error.
  Status runLaunch(const LaunchStep &s, size_t i);
  Status runSpmm(const SpmmStep &s, size_t i) const;
  Status runGemm(const GemmStep &s, size_t i) const;
  Status runFill(const FillStep &s, size_t i) const;
  Status runCopy(const CopyStep &s, size_t i) const;

  /// Evaluates `f` for this run's graph into `out`.
  Status eval(const Formula &f, int64_t &out) const {
    StatusOr<int64_t> v = f.evaluate(scope);
    if (!v.ok())
      return v.error();
    out = *v;
    return Status();
  }
  /// The memory of buffer `name` in this run.
  void *ptr(const std::string &name) const {
    return pointers[m.slotOf.at(name)];
  }
  /// Names step `i` in a message (built only for one: a string per step
  /// costs every call).
  std::string where(size_t i) const {
    return "program '" + m.program.name + "' step " + std::to_string(i);
  }
};

Status Executable::Impl::StepRunner::run(size_t i) {
  const Step &step = m.program.steps[i];
  if (auto *s = std::get_if<LaunchStep>(&step))
    return runLaunch(*s, i);
  if (auto *s = std::get_if<SpmmStep>(&step))
    return runSpmm(*s, i);
  if (auto *s = std::get_if<GemmStep>(&step))
    return runGemm(*s, i);
  if (auto *s = std::get_if<FillStep>(&step))
    return runFill(*s, i);
  if (auto *s = std::get_if<CopyStep>(&step))
    return runCopy(*s, i);
  return Status();
}

Status Executable::Impl::StepRunner::packArgs(const LaunchStep &s, size_t i) {
  for (size_t a = 0; a < s.args.size(); ++a) {
    const KernelArg &arg = s.args[a];
    uint64_t &slot = storage[a];
    switch (arg.kind) {
    case KernelArg::Kind::Buffer: {
      void *p = pointers[m.argSlots[i][a]];
      std::memcpy(&slot, &p, sizeof(p));
      break;
    }
    case KernelArg::Kind::Graph: {
      void *p = m.graphArray(graph, arg.name);
      std::memcpy(&slot, &p, sizeof(p));
      break;
    }
    case KernelArg::Kind::I32:
    case KernelArg::Kind::I64: {
      int64_t v = 0;
      GNN_RETURN_IF_ERROR(eval(arg.integer, v));
      if (arg.kind == KernelArg::Kind::I32) {
        int32_t n = static_cast<int32_t>(v);
        std::memcpy(&slot, &n, sizeof(n));
      } else {
        std::memcpy(&slot, &v, sizeof(v));
      }
      break;
    }
    case KernelArg::Kind::F32:
      std::memcpy(&slot, &arg.real, sizeof(float));
      break;
    }
  }
  return Status();
}

Status Executable::Impl::StepRunner::runLaunch(const LaunchStep &s, size_t i) {
  Kernel *kernel = m.launches[i];
  GNN_RETURN_IF_ERROR(packArgs(s, i));
  int64_t g[3] = {0, 0, 0}, shared = 0;
  for (int d = 0; d < 3; ++d)
    GNN_RETURN_IF_ERROR(eval(s.grid[d], g[d]));
  GNN_RETURN_IF_ERROR(eval(s.sharedBytes, shared));
  if (g[0] == 0 || g[1] == 0 || g[2] == 0)
    return Status(); // nothing to do on an empty graph
  if (g[0] < 0 || g[1] < 0 || g[2] < 0 || g[0] > 0x7fffffff || g[1] > 65535 ||
      g[2] > 65535)
    return Status::error(where(i) + ": grid " + std::to_string(g[0]) + "x" +
                         std::to_string(g[1]) + "x" + std::to_string(g[2]) +
                         " is out of range");
  if (shared > 48 * 1024) {
    std::lock_guard<std::mutex> lock(m.mutex);
    GNN_RETURN_IF_ERROR(kernel->allowDynamicShared(static_cast<int>(shared)));
  }
  return kernel->launch(g[0], g[1], g[2], s.block[0], s.block[1], s.block[2],
                        static_cast<unsigned>(shared),
                        reinterpret_cast<CUstream>(stream), argv.data());
}

Status Executable::Impl::StepRunner::runSpmm(const SpmmStep &s,
                                             size_t i) const {
  int64_t cols = 0;
  GNN_RETURN_IF_ERROR(eval(s.cols, cols));
  DType type = m.program.buffers[m.slotOf.at(s.input)].dtype;
  Status st2 =
      spmmCsr(graph, type, s.weights.empty() ? nullptr : ptr(s.weights),
              ptr(s.input), ptr(s.output), cols, s.alpha, s.beta, stream);
  if (!st2.ok())
    return st2.withContext(where(i));
  return Status();
}

Status Executable::Impl::StepRunner::runGemm(const GemmStep &s,
                                             size_t i) const {
  int64_t mm = 0, nn = 0, kk = 0;
  GNN_RETURN_IF_ERROR(eval(s.m, mm));
  GNN_RETURN_IF_ERROR(eval(s.n, nn));
  GNN_RETURN_IF_ERROR(eval(s.k, kk));
  DType type = m.program.buffers[m.slotOf.at(s.a)].dtype;
  Status st2;
  if (!s.bias.empty()) {
    st2 = gemmBias(s.transB, mm, nn, kk, static_cast<const float *>(ptr(s.a)),
                   static_cast<const float *>(ptr(s.b)),
                   static_cast<const float *>(ptr(s.bias)),
                   static_cast<float *>(ptr(s.c)), stream, s.relu);
  } else if (s.partials.empty()) {
    st2 = gemm(type, s.transA, s.transB, mm, nn, kk, s.alpha, ptr(s.a),
               ptr(s.b), s.beta, ptr(s.c), stream);
  } else {
    int64_t chunks = 0;
    GNN_RETURN_IF_ERROR(eval(s.chunks, chunks));
    st2 = gemmRowSplit(mm, nn, kk, chunks, s.alpha,
                       static_cast<const float *>(ptr(s.a)),
                       static_cast<const float *>(ptr(s.b)), s.beta,
                       static_cast<float *>(ptr(s.c)),
                       static_cast<double *>(ptr(s.partials)), stream,
                       s.rowSums.empty()
                           ? nullptr
                           : static_cast<float *>(ptr(s.rowSums)));
  }
  if (!st2.ok())
    return st2.withContext(where(i));
  return Status();
}

Status Executable::Impl::StepRunner::runFill(const FillStep &s,
                                             size_t i) const {
  const BufferDecl &b = m.program.buffers[m.slotOf.at(s.buffer)];
  int64_t n = 0;
  GNN_RETURN_IF_ERROR(eval(b.size, n));
  cudaError_t e;
  if (b.dtype == DType::I64 ||
      (b.dtype == DType::F64 && s.value == 0 && !std::signbit(s.value))) {
    e = cudaMemsetAsync(ptr(s.buffer), 0, n * 8, stream);
  } else if (b.dtype == DType::F64) {
    Status st2 = fill64(ptr(s.buffer), s.value, n, stream);
    if (!st2.ok())
      return st2.withContext(where(i));
    e = cudaSuccess;
  } else if (isHalf(b.dtype)) {
    // The value rounded to the storage type, 16 bits per element.
    uint16_t bits =
        gnn::halfBits(s.value, b.dtype == DType::BF16 ? gnn::HalfKind::BF16
                                                      : gnn::HalfKind::F16);
    StatusOr<CudaDriver *> d = CudaDriver::get();
    if (!d.ok())
      return d.error();
    GNN_RETURN_IF_ERROR(
        checkCu(**d, "cuMemsetD16Async",
                (*d)->fn().cuMemsetD16Async(
                    reinterpret_cast<CUdeviceptr>(ptr(s.buffer)), bits, n,
                    reinterpret_cast<CUstream>(stream))));
    e = cudaSuccess;
  } else {
    uint32_t bits;
    if (b.dtype == DType::F32) {
      float value = static_cast<float>(s.value);
      std::memcpy(&bits, &value, 4);
    } else
      bits = static_cast<uint32_t>(static_cast<int32_t>(s.value));
    // cuMemsetD32Async through the driver: the runtime has no 32-bit fill.
    StatusOr<CudaDriver *> d = CudaDriver::get();
    if (!d.ok())
      return d.error();
    GNN_RETURN_IF_ERROR(
        checkCu(**d, "cuMemsetD32Async",
                (*d)->fn().cuMemsetD32Async(
                    reinterpret_cast<CUdeviceptr>(ptr(s.buffer)), bits, n,
                    reinterpret_cast<CUstream>(stream))));
    e = cudaSuccess;
  }
  if (e != cudaSuccess)
    return Status::error(where(i) +
                         ": cudaMemsetAsync: " + cudaGetErrorName(e));
  return Status();
}

Status Executable::Impl::StepRunner::runCopy(const CopyStep &s,
                                             size_t i) const {
  const BufferDecl &b = m.program.buffers[m.slotOf.at(s.src)];
  int64_t n = 0;
  GNN_RETURN_IF_ERROR(eval(s.elements, n));
  cudaError_t e =
      cudaMemcpyAsync(ptr(s.dst), ptr(s.src), n * elementBytes(b.dtype),
                      cudaMemcpyDeviceToDevice, stream);
  if (e != cudaSuccess)
    return Status::error(where(i) +
                         ": cudaMemcpyAsync: " + cudaGetErrorName(e));
  return Status();
}

const std::vector<std::string> &Executable::boundNames() const {
  return impl->boundNames;
}

Status Executable::runBound(const Graph &graph,
                            const std::vector<void *> &bound,
                            cudaStream_t stream, void *workspace,
                            const RunGuard *guard) {
  return impl->runBound(graph, bound, stream, 0, impl->program.steps.size(),
                        workspace, guard);
}

Status Executable::runSteps(const Graph &graph,
                            const std::map<std::string, void *> &bindings,
                            cudaStream_t stream, size_t first, size_t count,
                            void *workspace, const RunGuard *guard) {
  Impl &m = *impl;
  for (auto &[name, ptr] : bindings) {
    auto it = m.slotOf.find(name);
    if (it == m.slotOf.end() ||
        m.program.buffers[it->second].role == BufferRole::Temp)
      return Status::error("binding '" + name +
                           "' is not an input or output of program '" +
                           m.program.name + "'");
  }
  std::vector<void *> bound;
  bound.reserve(m.boundSlots.size());
  for (size_t slot : m.boundSlots) {
    const BufferDecl &b = m.program.buffers[slot];
    auto it = bindings.find(b.name);
    if (it == bindings.end())
      return Status::error(std::string(b.role == BufferRole::Input ? "input"
                                                                   : "output") +
                           " buffer '" + b.name + "' of program '" +
                           m.program.name + "' is not bound");
    bound.push_back(it->second);
  }
  return m.runBound(graph, bound, stream, first, count, workspace, guard);
}

Status Executable::Impl::runBound(const Graph &graph,
                                  const std::vector<void *> &bound,
                                  cudaStream_t stream, size_t first,
                                  size_t count, void *workspace,
                                  const RunGuard *guard) {
  Impl &m = *this;
  if (guard && !guard->flag)
    guard = nullptr;
  GNN_RETURN_IF_ERROR(m.checkGraph(graph));
  if (!m.kernels.empty()) {
    // The launches go through the driver API, which needs the primary
    // context current on this thread; the runtime API makes it current only
    // on a thread's first runtime call. A thread whose first CUDA work is
    // this run (autograd's device threads, a user's own thread) would fail
    // with CUDA_ERROR_INVALID_CONTEXT.
    StatusOr<CudaDriver *> driver = CudaDriver::get();
    if (!driver.ok())
      return driver.error();
    GNN_RETURN_IF_ERROR((*driver)->makeCurrent());
  }
  FormulaScope scope = scopeOf(graph);
  StatusOr<std::shared_ptr<const MemoryPlan>> plan = m.planFor(scope);
  if (!plan.ok())
    return plan.error();
  size_t arena = (*plan)->arenaBytes;
  if (reinterpret_cast<uintptr_t>(workspace) % kArenaAlignment)
    return Status::error("the workspace of program '" + m.program.name +
                         "' is not aligned to " +
                         std::to_string(kArenaAlignment) + " bytes");
  // Without a workspace: this stream's own, held (host side) until every
  // step is enqueued, and grown only once the stream has finished with it.
  std::shared_ptr<Impl::OwnedWorkspace> own;
  std::unique_lock<std::mutex> ownLock;
  if (!workspace && arena) {
    GNN_RETURN_IF_ERROR(m.ownWorkspace(stream, arena, own, ownLock));
    workspace = own->buffer.data();
  }
  std::vector<void *> pointers;
  GNN_RETURN_IF_ERROR(m.bind(bound, scope, **plan,
                             static_cast<char *>(workspace), pointers));
  size_t last = std::min(m.program.steps.size(), first + count);
  auto enqueue = [&](cudaStream_t s) -> Status {
    // (The launches' argument storage: not needed where a replay runs.)
    std::vector<uint64_t> storage(m.maxArgs, 0);
    std::vector<void *> argv(m.maxArgs, nullptr);
    for (size_t a = 0; a < m.maxArgs; ++a)
      argv[a] = &storage[a];
    if (first == 0 && arena && environment().poisonWorkspace) {
      // NaN in every float: a step that reads a temp before writing it
      // shows.
      cudaError_t e = cudaMemsetAsync(workspace, 0xff, arena, s);
      if (e != cudaSuccess)
        return Status::error(std::string("cudaMemsetAsync (poisoning the "
                                         "workspace): ") +
                             cudaGetErrorName(e));
    }
    if (guard && first == 0)
      for (const RunGuard::Span &span : guard->compare)
        GNN_RETURN_IF_ERROR(
            compareAsync(span.a, span.b, span.bytes, guard->flag, s));
    Impl::StepRunner runner{m, graph, scope, pointers, s, storage, argv};
    // Steps that overlap others (windows i .. j - 1 with j in forkedAt[i],
    // both ends in this run) go to the thread's second stream when their
    // window starts, after the steps before it; the caller's stream waits
    // for that stream before its next step after any of them (inside a
    // capture these are the graph's edges). The second stream runs them in
    // the order they are forked; without one every step runs in order.
    SideStream *side = nullptr;
    bool sideTried = false;
    // Step j went to the second stream: one is there (tried at the first
    // fork, which comes before j) and j's window starts in this run.
    auto forked = [&](size_t j) {
      return side && m.windowFrom[j] != SIZE_MAX && m.windowFrom[j] >= first;
    };
    size_t pendingFrom = SIZE_MAX; // the first forked step not yet joined
    auto join = [&]() -> Status {
      GNN_RETURN_IF_ERROR(checkFork(cudaEventRecord(side->join, side->stream),
                                    "cudaEventRecord"));
      GNN_RETURN_IF_ERROR(checkFork(cudaStreamWaitEvent(s, side->join, 0),
                                    "cudaStreamWaitEvent"));
      pendingFrom = SIZE_MAX;
      return Status();
    };
    for (size_t i = first; i < last; ++i) {
      if (pendingFrom < i && !forked(i))
        GNN_RETURN_IF_ERROR(join());
      bool waited = false;
      for (size_t j : m.forkedAt[i]) {
        if (j >= last)
          continue;
        if (!sideTried) {
          sideTried = true;
          side = environment().concurrentLaunches
                     ? sideStream(!streamCapturing(s))
                     : nullptr;
        }
        if (!side)
          break;
        if (!waited) {
          GNN_RETURN_IF_ERROR(checkFork(cudaEventRecord(side->fork, s),
                                        "cudaEventRecord"));
          GNN_RETURN_IF_ERROR(checkFork(
              cudaStreamWaitEvent(side->stream, side->fork, 0),
              "cudaStreamWaitEvent"));
          waited = true;
        }
        Impl::StepRunner beside{m,       graph,   scope, pointers,
                                side->stream, storage, argv};
        GNN_RETURN_IF_ERROR(beside.run(j));
        pendingFrom = std::min(pendingFrom, j);
      }
      if (!forked(i))
        GNN_RETURN_IF_ERROR(runner.run(i));
    }
    if (pendingFrom != SIZE_MAX)
      GNN_RETURN_IF_ERROR(join());
    if (guard && last == m.program.steps.size())
      GNN_RETURN_IF_ERROR(poisonIfFlagged(guard->poison, guard->flag, s));
    return Status();
  };
  if (first != 0 || last != m.program.steps.size() || !m.replayable ||
      (m.program.steps.size() == 1 && !guard) || !environment().cudaGraphs)
    return enqueue(stream);
  return m.replay(graph, scope, pointers, guard, stream, enqueue);
}

Executable::Impl::Key
Executable::Impl::runKey(const Graph &graph, const FormulaScope &scope,
                         const std::vector<void *> &pointers,
                         const RunGuard *guard) const {
  // Everything a step's launch is made of besides the Program itself: the
  // device, the graph's sizes (every formula reads only these), each
  // buffer's memory (inputs, outputs and the temps' places) and the graph
  // arrays the kernels read.
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess)
    (void)cudaGetLastError();
  std::vector<int64_t> key;
  key.reserve(9 + pointers.size() + graphArrays.size());
  key.insert(key.end(), {device, scope.nodes, scope.edges, scope.graphs,
                         scope.maxInDegree, scope.maxOutDegree,
                         scope.largestGraph, scope.srcNodes, scope.dstNodes});
  for (void *p : pointers)
    key.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(p)));
  for (int id : graphArrays)
    key.push_back(static_cast<int64_t>(
        reinterpret_cast<intptr_t>(graphArray(graph, id))));
  if (guard) {
    // The change check's launches: its flag, spans and fill targets.
    auto address = [](const void *p) {
      return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
    };
    key.insert(key.end(), {address(guard->flag),
                           int64_t(guard->compare.size()),
                           int64_t(guard->poison.size())});
    for (const RunGuard::Span &span : guard->compare)
      key.insert(key.end(),
                 {address(span.a), address(span.b), int64_t(span.bytes)});
    for (const PoisonTarget &t : guard->poison)
      key.insert(key.end(),
                 {address(t.data), t.count, int64_t(t.dtype)});
  }
  // FNV-1a's step once per 64-bit entry (not per byte): equal hashes first,
  // then the entries.
  uint64_t hash = 1469598103934665603ull;
  for (int64_t v : key)
    hash = (hash ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  return Key{std::move(key), hash};
}

Status Executable::Impl::replay(
    const Graph &graph, const FormulaScope &scope,
    const std::vector<void *> &pointers, const RunGuard *guard,
    cudaStream_t stream,
    const std::function<Status(cudaStream_t)> &enqueue) {
  if (replayOff)
    return enqueue(stream);
  // Inside a capture of the caller's (PyTorch's CUDA graphs) the steps are
  // captured there, one by one, as before.
  if (streamCapturing(stream))
    return enqueue(stream);
  Key key = runKey(graph, scope, pointers, guard);
  auto launch = [&](cudaGraphExec_t exec) -> Status {
    cudaError_t e = cudaGraphLaunch(exec, stream);
    ++graphLaunches;
    if (e != cudaSuccess)
      return Status::error("program '" + program.name +
                           "': cudaGraphLaunch: " + cudaGetErrorName(e));
    return Status();
  };
  {
    // Held while launching: another run may evict (destroy) the graph.
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = replays.begin(); it != replays.end(); ++it) {
      if (!(it->key == key))
        continue;
      replays.splice(replays.begin(), replays, it);
      return launch(it->exec);
    }
    auto once = std::find(seen.begin(), seen.end(), key);
    if (once == seen.end()) {
      seen.push_front(std::move(key));
      if (seen.size() > kSeen)
        seen.pop_back();
      return enqueue(stream);
    }
    seen.erase(once);
  }
  // The second run of this key: captured on a stream of its own (nothing
  // else is enqueued there), then launched on the caller's.
  cudaStream_t side = nullptr;
  cudaGraph_t captured = nullptr;
  cudaGraphExec_t exec = nullptr;
  Status st;
  cudaError_t e = cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  if (e == cudaSuccess)
    e = cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal);
  if (e == cudaSuccess) {
    st = enqueue(side);
    e = cudaStreamEndCapture(side, &captured);
  }
  if (st.ok() && e == cudaSuccess && captured)
    e = cudaGraphInstantiate(&exec, captured, 0);
  if (captured)
    (void)cudaGraphDestroy(captured);
  if (side)
    (void)cudaStreamDestroy(side);
  if (!st.ok() || e != cudaSuccess || !exec) {
    // Something in the steps cannot be captured: step by step from now on
    // (and this run too).
    (void)cudaGetLastError();
    if (exec)
      (void)cudaGraphExecDestroy(exec);
    replayOff = true;
    return enqueue(stream);
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (++captures > kReplays && graphLaunches < 2 * captures)
    replayOff = true;
  replays.push_front(Replay{std::move(key), exec});
  if (replays.size() > kReplays) {
    (void)cudaGraphExecDestroy(replays.back().exec);
    replays.pop_back();
  }
  return launch(exec);
}
