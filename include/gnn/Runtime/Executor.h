//===- Executor.h - running a Program -----------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// An Executable is a Program compiled (NVRTC, through the kernel cache) and
/// loaded, ready to run many times on graphs with caller-provided buffers.
/// Its temporaries live in one workspace, placed by the memory plan of the
/// graph's sizes (MemoryPlan.h). Everything a run needs is bound per call,
/// so one Executable runs on several streams (and host threads) at once;
/// see run() for the workspace rules and Library.h for the library steps.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_EXECUTOR_H
#define GNN_RUNTIME_EXECUTOR_H

#include "gnn/Runtime/Compiler.h"
#include "gnn/Runtime/Graph.h"
#include "gnn/Runtime/MemoryPlan.h"
#include "gnn/Runtime/Module.h"
#include "gnn/Runtime/Program.h"

#include <map>
#include <memory>
#include <string>

namespace gnn {
namespace runtime {

/// A change check a run carries (the Python graph cache's, whose graph was
/// built from a tensor gnnc does not own): before the steps, each span of
/// `compare` (device memory: the tensor as it is now against the copy the
/// graph was built from) sets `*flag` where it differs (compareAsync);
/// after them, every element of `poison` becomes NaN where `*flag` is set
/// (poisonIfFlagged). Part of the run, so a replayed run replays them too
/// (no launch of their own on the host).
struct RunGuard {
  struct Span {
    const void *a = nullptr, *b = nullptr;
    size_t bytes = 0;
  };
  std::vector<Span> compare;
  unsigned *flag = nullptr;
  std::vector<PoisonTarget> poison;
};

/// A Program compiled and loaded, ready to run many times.
class Executable {
public:
  static StatusOr<std::unique_ptr<Executable>>
  create(const Program &program, Compiler &compiler = Compiler::instance(),
         const std::string &arch = "");
  /// A Program whose units are compiled already (`compiled`: compileProgram
  /// or compilePrograms of Jit.h, one result per unit): loads them.
  static StatusOr<std::unique_ptr<Executable>>
  load(const Program &program, const std::vector<CompileResult> &compiled);
  ~Executable();

  /// Runs every step on `stream` (asynchronously: no synchronisation).
  /// A run whose key (the device, the graph's sizes and arrays, every
  /// buffer's memory) was seen before is captured as a CUDA graph the second
  /// time and replayed from then on (one cudaGraphLaunch, the same launches
  /// in the same order), unless GNNC_CUDA_GRAPHS=0, the Program calls
  /// cuSPARSE, or `stream` is being captured (then step by step, captured
  /// into the caller's graph).
  /// `bindings` maps each input and output buffer name to a device pointer of
  /// at least its size. The temporaries live in `workspace`, which must hold
  /// workspaceBytes(graph) bytes, be aligned to kArenaAlignment (256) and not
  /// be used by anything else until the run's work on `stream` is done.
  /// With a null `workspace` the Executable uses one it owns per stream
  /// (allocated on first use, grown when a larger graph needs it, kept until
  /// the Executable is destroyed); calls on one stream then take turns on the
  /// host. Concurrent runs on different streams need different workspaces.
  /// `guard`: its compare before the steps and its NaN fill after them, in
  /// the run (and its key); a guard without a flag is none.
  Status run(const Graph &graph, const std::map<std::string, void *> &bindings,
             cudaStream_t stream = nullptr, void *workspace = nullptr,
             const RunGuard *guard = nullptr);

  /// Runs steps [first, first + count) only (per-step timing); the bindings
  /// and the workspace are as for run(). The steps see the temporaries as
  /// the previous call on the same workspace left them. A `guard`'s compare
  /// runs where the range starts at the first step, its fill where it ends
  /// at the last.
  Status runSteps(const Graph &graph,
                  const std::map<std::string, void *> &bindings,
                  cudaStream_t stream, size_t first, size_t count,
                  void *workspace = nullptr, const RunGuard *guard = nullptr);

  /// The names of the Program's input and output buffers in its buffer
  /// order: what runBound's `bound` pointers stand for, one each.
  const std::vector<std::string> &boundNames() const;
  /// run() with the bindings given as one pointer per boundNames() entry,
  /// in that order (no names looked up per call: a caller that binds the
  /// same buffers on every call maps its arguments once).
  Status runBound(const Graph &graph, const std::vector<void *> &bound,
                  cudaStream_t stream = nullptr, void *workspace = nullptr,
                  const RunGuard *guard = nullptr);

  /// Bytes of workspace a run on `graph` needs (the arena of its memory
  /// plan; 0 when the Program has no temporaries).
  StatusOr<size_t> workspaceBytes(const Graph &graph) const;
  /// The memory plan at `graph`'s sizes (computed once per size and kept).
  StatusOr<std::shared_ptr<const MemoryPlan>>
  memoryPlan(const Graph &graph) const;

  /// Whole runs launched as a captured CUDA graph so far (each capture's
  /// first launch included).
  size_t graphLaunches() const;

  const Program &program() const;
  /// Resource use of each kernel (registers, spills).
  std::map<std::string, KernelInfo> kernelInfo() const;

private:
  Executable();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The side streams (a second stream and its two events, per host thread
/// and device, made by the first run with overlapping launches on that
/// thread) that exist now; a thread's are destroyed when it ends.
int64_t liveSideStreams();

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_EXECUTOR_H
