//===- CudaBackend.h - gnn-run's cuda backend -------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TOOLS_GNN_RUN_CUDABACKEND_H
#define GNN_TOOLS_GNN_RUN_CUDABACKEND_H

#include "gnn/Dialect/GNN/Transforms/Autodiff.h"
#include "gnn/Graph/HostGraph.h"
#include "gnn/Reference/Evaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <string>
#include <vector>

namespace gnn {

struct CudaRunOptions {
  /// Compile with NVRTC for `arch` without running (no GPU needed).
  bool compileOnly = false;
  std::string arch;
  int warmup = 5, reps = 20;
  bool profileSteps = false;
  std::string dumpProgram, dumpSource;
  /// Where to write the memory plan of the temporaries (JSON), or empty.
  std::string dumpMemoryPlan;
};

/// The error for a code-generation flag (--split, --max-chunks) out of its
/// range, naming the flag, the value and what is allowed; empty if none.
/// Checked up front for every backend, before any IR is read.
std::string checkCodegenFlags();

/// The code-generation flags given on the command line (--split,
/// --max-chunks), by name: options of the cuda backend, refused on the
/// reference (which generates no kernels).
std::vector<std::string> codegenFlagsGiven();

/// Compiles `func` (in `module`, not modified) for the GPU, runs it on
/// `graph` with `inputs`, times it and compares its outputs with `reference`
/// when given. Adds a "cuda" object to `summary`; writes the outputs to
/// `outputs`. Returns the exit code; errors are printed.
int runCudaBackend(mlir::ModuleOp module, mlir::func::FuncOp func,
                   const HostGraph &graph, const std::vector<Tensor> &inputs,
                   const std::vector<Tensor> *reference,
                   const CudaRunOptions &options, llvm::json::Object &summary,
                   std::vector<Tensor> &outputs);

/// What a training run is checked against (gnn-run --grad).
struct TrainingCheck {
  /// The reference forward's outputs (results, then residual outputs), or
  /// null: unchecked.
  const std::vector<Tensor> *forward = nullptr;
  /// The output gradients to seed, one per result of these shapes.
  std::function<std::vector<Tensor>(
      const std::vector<std::vector<int64_t>> &shapes)>
      seedOutputGrads;
  /// The reference gradients from a forward's outputs (its residuals: the
  /// GPU forward's; where the gradients differ from those, the reference
  /// forward's, `forward`) and the output gradients; empty: unchecked.
  std::function<mlir::FailureOr<std::vector<Tensor>>(
      const std::vector<Tensor> &forwardOutputs,
      const std::vector<Tensor> &outputGrads)>
      referenceGrads;
};

/// Compiles the training step of `training` (in `module`, not modified) for
/// the GPU and runs it with the runtime's training entry
/// (TrainingExecutable): the graph built once, the forward, then the
/// backward on the residuals the forward left on the device. Times the
/// forward, the backward and the whole step, compares the forward's outputs
/// and the gradients with `check`, and adds a "cuda" object to `summary`
/// ("fwd", "bwd", "fwdbwd_median_ms" and the step's device memory). Writes
/// the forward's outputs and the gradients. With `options.compileOnly`
/// compiles both Programs for the target and runs nothing. Returns the exit
/// code; errors are printed.
int runCudaTraining(mlir::ModuleOp module,
                    const mlir::gnn::TrainingFunctions &training,
                    const HostGraph &graph, const std::vector<Tensor> &inputs,
                    const TrainingCheck &check, const CudaRunOptions &options,
                    llvm::json::Object &summary,
                    std::vector<Tensor> &forwardOutputs,
                    std::vector<Tensor> &gradients);

} // namespace gnn

#endif // GNN_TOOLS_GNN_RUN_CUDABACKEND_H
