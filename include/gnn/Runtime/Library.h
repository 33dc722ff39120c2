//===- Library.h - cuSPARSE and cuBLAS steps ----------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Vendor-library steps a Program can use. cuSPARSE descriptors, the chosen
/// algorithm and the workspace are cached per graph, dense shape and stream
/// (creating them costs more than a small SpMM), inside the Graph. fp32
/// throughout; cuBLAS runs in its default (non-TF32) math mode, so results
/// match fp32.
///
/// Concurrency: both functions may be called from several host threads on
/// different streams at once. One cuSPARSE and one cuBLAS handle serve the
/// process; a mutex covers setting a handle's stream and the call that uses
/// it, so host-side enqueueing of library steps is serialised (the device
/// work still overlaps). A graph's SpMM plan (permuted weights, workspace)
/// belongs to one stream; plans are kept per stream until the Graph is
/// destroyed, keyed by the stream's handle (a destroyed stream whose handle
/// is reused by a new one shares its plan: stream-ordered on the new stream,
/// which is safe once the old stream's work is done). cuBLAS picks its
/// internal workspace per stream; with several streams active its results
/// are correct but not guaranteed bitwise identical to a one-stream run.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_LIBRARY_H
#define GNN_RUNTIME_LIBRARY_H

#include "gnn/Runtime/Graph.h"

namespace gnn {
namespace runtime {

/// y[d, :] = alpha * sum_{e: s -> d} w[e] * x[s, :] + beta * y[d, :] for the
/// `cols`-wide row-major x (N x cols) and y, through cuSPARSE on the CSR.
/// `weights` is one float per edge in edge-list order, or null for 1.
Status spmmCsr(const Graph &graph, const float *weights, const float *x,
               float *y, int64_t cols, float alpha, float beta,
               cudaStream_t stream);

/// Row-major C (m x n) = alpha * op(A) * op(B) + beta * C with op(A) m x k and
/// op(B) k x n; `transA` / `transB` transpose the stored matrices.
Status gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
            float alpha, const float *a, const float *b, float beta, float *c,
            cudaStream_t stream);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_LIBRARY_H
