//===- CudaBackend.h - gnn-run's cuda backend -------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TOOLS_GNN_RUN_CUDABACKEND_H
#define GNN_TOOLS_GNN_RUN_CUDABACKEND_H

#include "gnn/Graph/HostGraph.h"
#include "gnn/Reference/Evaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

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

/// Compiles `func` (in `module`, which is modified) for the GPU, runs it on
/// `graph` with `inputs`, times it and compares its outputs with `reference`
/// when given. Adds a "cuda" object to `summary`; writes the outputs to
/// `outputs`. Returns the exit code; errors are printed.
int runCudaBackend(mlir::ModuleOp module, mlir::func::FuncOp func,
                   const HostGraph &graph, const std::vector<Tensor> &inputs,
                   const std::vector<Tensor> *reference,
                   const CudaRunOptions &options, llvm::json::Object &summary,
                   std::vector<Tensor> &outputs);

} // namespace gnn

#endif // GNN_TOOLS_GNN_RUN_CUDABACKEND_H
