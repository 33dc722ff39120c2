//===- Module.h - loaded kernels and launches ---------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A cubin loaded into the primary context, its kernels, and launches on a
/// caller-given stream.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_MODULE_H
#define GNN_RUNTIME_MODULE_H

#include "gnn/Runtime/Compiler.h"
#include "gnn/Runtime/CudaDriver.h"

#include <string>
#include <vector>

namespace gnn {
namespace runtime {

/// Resource use of one kernel as the driver reports it.
struct KernelInfo {
  int registers = 0;
  /// Local memory per thread: register spills and local arrays.
  int localBytes = 0;
  int staticSharedBytes = 0;
  int maxThreadsPerBlock = 0;
};

/// One kernel of a loaded module.
class Kernel {
public:
  Kernel() = default;
  CUfunction handle() const { return fn; }
  const std::string &name() const { return entry; }
  const KernelInfo &info() const { return resources; }

  /// Allows up to `bytes` of dynamic shared memory (above 48 KB the driver
  /// needs this opt-in).
  Status allowDynamicShared(int bytes);

  /// Launches on `stream`; `args` points at each argument's value, as for
  /// cuLaunchKernel.
  Status launch(unsigned gridX, unsigned gridY, unsigned gridZ,
                unsigned blockX, unsigned blockY, unsigned blockZ,
                unsigned sharedBytes, CUstream stream, void **args) const;

private:
  friend class Module;
  CUfunction fn = nullptr;
  std::string entry;
  KernelInfo resources;
  int sharedAllowed = 48 * 1024;
  const CudaDriver *driver = nullptr;
};

/// A loaded cubin. Unloaded on destruction.
class Module {
public:
  /// Loads `cubin` into the primary context.
  static StatusOr<std::unique_ptr<Module>> load(const Cubin &cubin);
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// Looks up an `extern "C" __global__` function.
  StatusOr<Kernel> kernel(const std::string &name) const;

private:
  Module() = default;
  CUmodule module = nullptr;
  const CudaDriver *driver = nullptr;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_MODULE_H
