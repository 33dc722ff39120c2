//===- Compiler.h - NVRTC compilation with a persistent cache -----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Compiles CUDA C++ with NVRTC to a cubin for the current device or an
/// explicit `sm_XX`, with the runtime's device header (`gnn_device.cuh`)
/// available to the source. Results are cached in memory and on disk.
///
/// Cache key: the source, the options, the architecture, the NVRTC version,
/// the driver version (0 without a driver) and gnnc's build id. Disk entries
/// are written to a temporary file and renamed into place (atomic), carry a
/// header with the key's hash and the payload's length and checksum, and are
/// recompiled when any of it does not match, so truncated or corrupt entries
/// are never trusted. Several processes compiling the same kernel at once each
/// write a complete entry; the last rename wins. The checksum detects
/// accidents, not writers: the cache folder and each entry are used only when
/// owned by the effective user and not writable by group or others (see
/// readCacheFile in CacheEntry.h); otherwise a warning says why and kernels
/// are compiled without the cache.
///
/// With GNNC_DUMP_DIR set, each compiled kernel's source and NVRTC log are
/// written there; a dump that cannot be written fails the compile with an
/// error naming the file.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_COMPILER_H
#define GNN_RUNTIME_COMPILER_H

#include "gnn/Runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gnn {
namespace runtime {

/// What to compile.
struct CompileRequest {
  std::string source;
  /// Shown in errors and dump files, e.g. "gat_forward".
  std::string name = "kernel";
  /// "sm_90", or empty for the current device (needs a driver and a GPU).
  std::string arch;
  /// Extra NVRTC options (e.g. "-DFOO=1"); gnnc adds -arch, -std=c++17,
  /// --use_fast_math is NOT added implicitly.
  std::vector<std::string> options;
};

/// Where a cubin came from.
enum class CacheOutcome { Compiled, MemoryHit, DiskHit };

/// A compiled kernel image.
struct Cubin {
  std::vector<char> image;
  std::string arch;
  /// NVRTC's log (warnings); empty for cache hits from disk.
  std::string log;
};

/// A compiled kernel and where it came from. Cubins are shared, never copied,
/// so a memory hit costs a hash lookup.
struct CompileResult {
  std::shared_ptr<const Cubin> cubin;
  CacheOutcome outcome = CacheOutcome::Compiled;
};

/// NVRTC's version as 1000 * major + 10 * minor (13000 for 13.0).
int nvrtcVersionNumber();

/// gnnc's build id (a component of every cache key).
const char *buildId();

/// The text of the device header `gnn_device.cuh`.
const std::string &deviceHeaderSource();

/// The kernel compiler; one per process is the usual use (`instance()`), tests
/// make their own to control the cache folder.
class Compiler {
public:
  /// `cacheDir` empty: no disk cache.
  explicit Compiler(std::string cacheDir);
  ~Compiler();

  /// The process-wide compiler, with the folder of GNNC_CACHE_DIR.
  static Compiler &instance();

  /// Compiles `request` or returns a cached cubin. On failure the error holds
  /// the full NVRTC log, the options used and the source lines the log names.
  StatusOr<CompileResult> compile(const CompileRequest &request);

  /// Forgets the in-memory entries (the disk cache stays).
  void clearMemory();

  /// The disk path an entry for `request` would have (for tests).
  StatusOr<std::string> diskPath(const CompileRequest &request);

private:
  struct Impl;
  Impl *impl;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_COMPILER_H
