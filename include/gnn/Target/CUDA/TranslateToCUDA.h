//===- TranslateToCUDA.h - gnnk-lowered functions as Programs -----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime Program of a function whose kernel groups have been lowered to
/// `gnnk.launch`es of `gnnk.kernel`s (gnn-cuda-pipeline): the CUDA source of
/// the module's kernels (CUDAPrinter.h), launches built from each kernel's
/// parameter bindings and launch shape, cuBLAS GEMMs for linalg.matmul,
/// fills, copies, aliases for reshapes, and the conversion of edge tensors
/// between edge-list order (the function's boundary) and CSR slot order
/// (inside the Program). A pure function of the IR: it runs no pass and
/// changes nothing.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TARGET_CUDA_TRANSLATETOCUDA_H
#define GNN_TARGET_CUDA_TRANSLATETOCUDA_H

#include "gnn/Runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace gnn {

/// Checks that `func` takes at most one `!gnn.graph`: a Program runs on one
/// graph and its kernels index that graph, so two graph arguments would be
/// one. Emits a located error (noting the second graph) otherwise.
LogicalResult checkOneGraph(func::FuncOp func);

/// The runtime Program of `func` (after gnn-cuda-pipeline). Inputs are named
/// `arg<K>` after the function's argument numbers, outputs `result<K>`.
/// `indexBits` is the width of the graph's index arrays. With
/// `csrOrderEdges`, edge tensors cross the boundary as they are (the graph's
/// edges arrive in CSR order: edge i is slot i), without conversion steps.
FailureOr<::gnn::runtime::Program>
buildProgram(func::FuncOp func, int indexBits, bool csrOrderEdges = false);

/// Names of the boundary conversion kernels (edge order <-> slot order),
/// printed in every module's prelude: of f32 elements (always in a
/// Program's kernel list), and of f64 elements (listed when used).
constexpr const char *kEdgesToSlots = "gnn_edges_to_slots";
constexpr const char *kSlotsToEdges = "gnn_slots_to_edges";
constexpr const char *kEdgesToSlotsF64 = "gnn_edges_to_slots_f64";
constexpr const char *kSlotsToEdgesF64 = "gnn_slots_to_edges_f64";
constexpr const char *kEdgesToSlotsBF16 = "gnn_edges_to_slots_bf16";
constexpr const char *kSlotsToEdgesBF16 = "gnn_slots_to_edges_bf16";
constexpr const char *kEdgesToSlotsF16 = "gnn_edges_to_slots_f16";
constexpr const char *kSlotsToEdgesF16 = "gnn_slots_to_edges_f16";

} // namespace gnn
} // namespace mlir

#endif // GNN_TARGET_CUDA_TRANSLATETOCUDA_H
