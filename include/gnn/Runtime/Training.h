//===- Training.h - running a training step -----------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A TrainingExecutable is a TrainingProgram (TrainingProgram.h) compiled and
/// loaded: the forward and the backward of one function, run on one Graph
/// (its CSC and edge permutation built once, read by both) with one set of
/// caller-provided device buffers named as in TrainingProgram.h. The
/// forward writes the results and residuals into `result<k>`; the backward
/// reads them there, and the arguments in `arg<i>`, without any copy or
/// upload in between. Each phase has its own workspace (the forward's is
/// free while the backward runs).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_TRAINING_H
#define GNN_RUNTIME_TRAINING_H

#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/TrainingProgram.h"

#include <map>
#include <memory>
#include <string>

namespace gnn {
namespace runtime {

class TrainingExecutable {
public:
  /// Verifies `program` and compiles and loads both Programs.
  static StatusOr<std::unique_ptr<TrainingExecutable>>
  create(const TrainingProgram &program,
         Compiler &compiler = Compiler::instance(), const std::string &arch = "");

  /// Runs the forward on `stream` (asynchronously). `bindings` holds the
  /// step's buffers by name (TrainingProgram::stepBuffers); the forward
  /// reads `arg<i>` and writes every `result<k>`. Names of the step the
  /// forward does not use are ignored; any other name is an error. The
  /// workspace is as for Executable::run, of forwardWorkspaceBytes().
  Status forward(const Graph &graph,
                 const std::map<std::string, void *> &bindings,
                 cudaStream_t stream = nullptr, void *workspace = nullptr,
                 const RunGuard *guard = nullptr);

  /// Runs the backward on `stream` after a forward on the same graph and
  /// bindings: it reads `arg<i>`, `result<k>` (as the forward left them) and
  /// `dresult<k>`, and writes every `grad<i>`. The workspace is of
  /// backwardWorkspaceBytes().
  Status backward(const Graph &graph,
                  const std::map<std::string, void *> &bindings,
                  cudaStream_t stream = nullptr, void *workspace = nullptr,
                  const RunGuard *guard = nullptr);

  /// The forward's and the backward's own bindings (their buffer names)
  /// from the step's: for running or timing one of them on its own
  /// (Executable::runSteps, the autotuner).
  StatusOr<std::map<std::string, void *>>
  forwardBindings(const std::map<std::string, void *> &bindings) const;
  StatusOr<std::map<std::string, void *>>
  backwardBindings(const std::map<std::string, void *> &bindings) const;

  StatusOr<size_t> forwardWorkspaceBytes(const Graph &graph) const;
  StatusOr<size_t> backwardWorkspaceBytes(const Graph &graph) const;

  Executable &forwardExecutable() { return *fwd; }
  Executable &backwardExecutable() { return *bwd; }
  const TrainingProgram &program() const { return training; }

private:
  TrainingExecutable() = default;
  Status checkNames(const std::map<std::string, void *> &bindings) const;

  TrainingProgram training;
  std::unique_ptr<Executable> fwd, bwd;
  /// The step's buffer names (stepBuffers()).
  std::map<std::string, BufferRole> stepNames;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_TRAINING_H
