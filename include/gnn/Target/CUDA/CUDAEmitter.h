//===- CUDAEmitter.h - CUDA kernels from kernel groups ------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Emits one CUDA kernel per `gnn.kernel_group` (after gnn-codegen-pipeline),
/// with shapes and element types as compile-time constants and the elementwise
/// bodies inlined, and describes each kernel's parameters so that the Program
/// lowering can bind them. Unsupported IR fails with a diagnostic on the op.
///
/// Layout convention: node tensors are row-major with one row per node; edge
/// tensors inside a Program are row-major in CSR slot order (the order of the
/// graph's CSR by destination), so aggregations and softmax read their edges
/// contiguously. Function arguments and results that are edge tensors are in
/// edge-list order and converted at the Program's boundary.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TARGET_CUDA_CUDAEMITTER_H
#define GNN_TARGET_CUDA_CUDAEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir {
namespace gnn {

/// One parameter of an emitted kernel, in signature order.
struct KernelParam {
  enum class Kind { Input, Output, GraphArray, Rows, Scratch };
  Kind kind = Kind::Input;
  /// Input: the tensor read. Output: the group result written.
  Value value;
  /// Graph array name (csr_row_ptr, ...) for GraphArray.
  std::string graphArray;
  /// Rows: a formula of the graph's sizes ("nodes", "edges", "128").
  /// Scratch: its size in floats.
  std::string formula;
  /// Scratch: a name shared by the kernels of one group that use it.
  std::string scratch;
};

/// An emitted kernel and how to launch it. A group may need several kernels
/// (heavy rows of an aggregation), launched in order.
struct KernelSpec {
  std::string name;
  std::vector<KernelParam> params;
  /// Total threads (a formula); the grid is ceil_div(threads, block).
  std::string threads;
  int64_t block = 256;
  /// The kernel group it came from.
  Operation *group = nullptr;
};

/// Options of the emission.
struct EmitOptions {
  /// Width of the graph's index arrays (32 or 64), a compile-time constant.
  int indexBits = 32;
};

/// Emits the kernels of every kernel group of `func`, in program order, to
/// `os`, preceded by the helper kernels that convert edge tensors between
/// edge-list order and CSR slot order.
FailureOr<std::vector<KernelSpec>> emitKernels(func::FuncOp func,
                                               llvm::raw_ostream &os,
                                               const EmitOptions &options);

/// The number of rows of a tensor as a formula: a constant for a static
/// leading dimension, else "nodes" or "edges" from the value's domain.
/// Function arguments without `gnn.domain` are node tensors.
FailureOr<std::string> rowsFormula(Value value);

/// Elements per row (product of the trailing dimensions, which must be
/// static).
FailureOr<int64_t> rowElements(Value value, Operation *where);

/// Names of the boundary conversion kernels (edge order <-> slot order).
constexpr const char *kEdgesToSlots = "gnn_edges_to_slots";
constexpr const char *kSlotsToEdges = "gnn_slots_to_edges";

} // namespace gnn
} // namespace mlir

#endif // GNN_TARGET_CUDA_CUDAEMITTER_H
