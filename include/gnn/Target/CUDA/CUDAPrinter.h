//===- CUDAPrinter.h - gnnk kernels as CUDA C++ -----------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The CUDA printer of the `gnnk` dialect: every `gnnk.kernel` of a module
/// becomes one `extern "C" __global__` function, one print function per op
/// over a small printer state (the shape of upstream MLIR's C++ emitter,
/// mlir/lib/Target/Cpp/TranslateToCpp.cpp). Printing is a pure function of
/// the IR: it runs no passes and never changes the module.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TARGET_CUDA_CUDAPRINTER_H
#define GNN_TARGET_CUDA_CUDAPRINTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir {
namespace gnn {

/// Prints the CUDA source of the `gnnk.kernel` ops of `module`, in order: a
/// banner, the `idx_t` typedef of `indexBits`-bit graph indices (32 or 64),
/// the device prelude (`gnn_device.cuh`, the helpers the printed code calls,
/// and the boundary kernels `gnn_edges_to_slots` / `gnn_slots_to_edges`),
/// then one `extern "C" __global__` function per kernel. Other top-level ops
/// (host functions with `gnnk.launch`) are skipped. On failure a diagnostic
/// is emitted on the offending op and nothing is written to `os`.
LogicalResult printKernelsAsCUDA(ModuleOp module, llvm::raw_ostream &os,
                                 int indexBits);

/// Like printKernelsAsCUDA above, returning the source as a string.
FailureOr<std::string> printKernelsAsCUDA(ModuleOp module, int indexBits);

/// The CUDA source of a module in pieces that compile on their own (one
/// NVRTC call each): the prelude every piece starts with (banner, `idx_t`,
/// the helpers), the boundary kernels, then one piece per `gnnk.kernel`.
/// text() is printKernelsAsCUDA's output: the pieces in that order.
struct CUDAUnits {
  struct Kernel {
    /// The `extern "C" __global__` functions the piece defines.
    std::vector<std::string> names;
    std::string text;
  };
  std::string prelude;
  std::vector<Kernel> kernels;
  std::string text() const;
};

/// The source of printKernelsAsCUDA in pieces (no text is cut: each piece
/// is printed on its own).
FailureOr<CUDAUnits> printKernelUnits(ModuleOp module, int indexBits);

/// Registers the mlir-translate translation `--gnnk-to-cuda` (option
/// `--gnnk-index-bits=32|64`, default 32), which prints a module of gnnk
/// kernels with printKernelsAsCUDA.
void registerGNNKToCUDATranslation();

} // namespace gnn
} // namespace mlir

#endif // GNN_TARGET_CUDA_CUDAPRINTER_H
