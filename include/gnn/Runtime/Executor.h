//===- Executor.h - running a Program -----------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// An Executable is a Program compiled (NVRTC, through the kernel cache) and
/// loaded, ready to run many times on graphs with caller-provided buffers.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_EXECUTOR_H
#define GNN_RUNTIME_EXECUTOR_H

#include "gnn/Runtime/Compiler.h"
#include "gnn/Runtime/Graph.h"
#include "gnn/Runtime/Module.h"
#include "gnn/Runtime/Program.h"

#include <map>
#include <memory>
#include <string>

namespace gnn {
namespace runtime {

/// A Program compiled and loaded, ready to run many times.
class Executable {
public:
  static StatusOr<std::unique_ptr<Executable>>
  create(const Program &program, Compiler &compiler = Compiler::instance(),
         const std::string &arch = "");
  ~Executable();

  /// Runs every step on `stream` (asynchronously: no synchronisation).
  /// `bindings` maps each input and output buffer name to a device pointer of
  /// at least its size; temps are allocated by the executable and reused.
  Status run(const Graph &graph, const std::map<std::string, void *> &bindings,
             cudaStream_t stream = nullptr);

  /// Runs steps [first, first + count) only (per-step timing); the bindings
  /// are checked as for run().
  Status runSteps(const Graph &graph,
                  const std::map<std::string, void *> &bindings,
                  cudaStream_t stream, size_t first, size_t count);

  const Program &program() const;
  /// Resource use of each kernel (registers, spills).
  std::map<std::string, KernelInfo> kernelInfo() const;

private:
  Executable();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_EXECUTOR_H
