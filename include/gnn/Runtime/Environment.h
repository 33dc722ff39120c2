//===- Environment.h - the runtime's environment knobs ------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every environment variable the runtime reads, read in one place (see
/// docs/Runtime.md):
///   GNNC_CACHE_DIR       kernel cache folder (default $XDG_CACHE_HOME/gnnc,
///                        ~/.cache/gnnc, else /tmp/gnnc-cache-<euid>; "off"
///                        disables the disk cache). Used only when owned by
///                        the effective user and not writable by others.
///   GNNC_ALWAYS_COMPILE  1: ignore every cache entry (still writes them)
///   GNNC_DUMP_DIR        write each compiled kernel's source and log here
///   GNNC_DEVICE          device ordinal (default: the device of the first
///                        CUDA tensor the Python binding is given, else 0)
///   GNNC_JIT_THREADS     threads compiling a Program's kernels (default:
///                        the hardware's concurrency, at most 16; 1: one
///                        after another on the caller's thread)
///   GNNC_POISON_WORKSPACE  1: fill an Executable's workspace with NaN (all
///                        bits set) before each run, so a step that reads a
///                        temporary it did not write shows in the results
///   GNNC_CUDA_GRAPHS     0: run every Program step by step, never replaying
///                        a captured CUDA graph of a repeated run (Executor)
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_ENVIRONMENT_H
#define GNN_RUNTIME_ENVIRONMENT_H

#include <string>

namespace gnn {
namespace runtime {

struct Environment {
  /// Empty when the disk cache is off.
  std::string cacheDir;
  bool alwaysCompile = false;
  /// Empty when not dumping.
  std::string dumpDir;
  /// -1: GNNC_DEVICE unset (CudaDriver::get's default).
  int deviceOrdinal = -1;
  bool poisonWorkspace = false;
  /// Whether repeated runs are replayed as CUDA graphs (GNNC_CUDA_GRAPHS).
  bool cudaGraphs = true;
  /// Whether a launch that may run beside the ones before it
  /// (LaunchStep::overlaps) is started on a second stream
  /// (GNNC_CONCURRENT_LAUNCHES; 0: every step after the one before).
  bool concurrentLaunches = true;
  /// 0: the default (Jit.h).
  int jitThreads = 0;
  /// Set when GNNC_JIT_THREADS is not a positive integer (compiles fail
  /// with it rather than guess).
  std::string jitThreadsError;
};

/// The environment as read at first use.
const Environment &environment();

/// Reads the environment now (tests change variables between calls).
Environment readEnvironment();

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_ENVIRONMENT_H
