//===- Library.h - cuSPARSE and cuBLAS steps ----------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Vendor-library steps a Program can use. cuSPARSE descriptors, the chosen
/// algorithm and the workspace are cached per graph, dense shape, element
/// type and stream (creating them costs more than a small SpMM), inside the
/// Graph. f32 or f64 throughout (every operand of a step has the step's
/// type); cuBLAS runs in its default (non-TF32) math mode, so results match
/// fp32.
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
#include "gnn/Runtime/Program.h"

namespace gnn {
namespace runtime {

/// y[d, :] = alpha * sum_{e: s -> d} w[e] * x[s, :] + beta * y[d, :] for the
/// `cols`-wide row-major x (N x cols) and y, through cuSPARSE on the CSR, in
/// `type` (F32 or F64; x, y and the weights are of that type).
/// `weights` is one value per edge in edge-list order, or null for 1.
Status spmmCsr(const Graph &graph, DType type, const void *weights,
               const void *x, void *y, int64_t cols, double alpha, double beta,
               cudaStream_t stream);

/// The f32 form of spmmCsr.
inline Status spmmCsr(const Graph &graph, const float *weights, const float *x,
                      float *y, int64_t cols, float alpha, float beta,
                      cudaStream_t stream) {
  return spmmCsr(graph, DType::F32, weights, x, y, cols, alpha, beta, stream);
}

/// Row-major C (m x n) = alpha * op(A) * op(B) + beta * C with op(A) m x k and
/// op(B) k x n; `transA` / `transB` transpose the stored matrices. `type` is
/// F32 (cublasSgemm), F64 (cublasDgemm), or BF16 / F16 (cublasGemmEx with
/// CUBLAS_COMPUTE_32F: f32 products and sums, C rounded once).
Status gemm(DType type, bool transA, bool transB, int64_t m, int64_t n,
            int64_t k, double alpha, const void *a, const void *b, double beta,
            void *c, cudaStream_t stream);

/// The f32 form of gemm.
inline Status gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                   float alpha, const float *a, const float *b, float beta,
                   float *c, cudaStream_t stream) {
  return gemm(DType::F32, transA, transB, m, n, k, alpha, a, b, beta, c,
              stream);
}

/// Row-major C (m x n) = A op(B) + bias for f32 A (m x k), B (k x n, or n x
/// k stored with `transB`: a Linear's weight) and `bias` (n elements, added
/// to every row): one cuBLASLt matmul with its bias epilogue, so the bias
/// costs no pass of its own over C. With `relu`, C = relu(A op(B) + bias)
/// in the same epilogue (RELU_BIAS: 0 where the sum is <= 0, a NaN kept, as
/// torch.relu; bit for bit the relu kernel's values on an H100,
/// bench/probes/gemm/relu_epilogue.cu, and in no more time than the GEMM).
Status gemmBias(bool transB, int64_t m, int64_t n, int64_t k, const float *a,
                const float *b, const float *bias, float *c,
                cudaStream_t stream, bool relu = false);

/// Row-major C (m x n) = alpha * Aᵀ B + beta * C for f32 A (k x m) and B
/// (k x n) with the k rows cut into `chunks` slices of ceil(k / chunks): one
/// block per 64 x 64 tile of C and slice sums its rows in double precision,
/// on the FP64 tensor cores (where C has a side of at most 16: a block per
/// 64 indices of its other side and slice, in double on the FP64 units),
/// into `partials` (chunks * m * n doubles), which
/// a second kernel adds in one fixed order (8 runs of consecutive slices,
/// each in slice order, then the runs in order). Deterministic, and precise
/// where an f32 GEMM over a million rows is not (a weight gradient's sum over
/// every node or edge). `chunks` >= 1; k may be 0.
///
/// `rowSums` (m floats, or null): A's column sums over the k rows as well
/// (Σ_r A[r, i], a bias gradient beside its weight's), summed in the same
/// kernels and slices, rounded once, neither alpha nor beta applied;
/// `partials` then holds chunks * (m * n + m) doubles. n >= 1 then.
Status gemmRowSplit(int64_t m, int64_t n, int64_t k, int64_t chunks,
                    double alpha, const float *a, const float *b, double beta,
                    float *c, double *partials, cudaStream_t stream,
                    float *rowSums = nullptr);

/// Fills `n` doubles at `data` with `value` on `stream` (the driver's memset
/// has no 64-bit pattern).
Status fill64(void *data, double value, int64_t n, cudaStream_t stream);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_LIBRARY_H
