//===- Library.cu - cuSPARSE and cuBLAS steps -----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Library.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <map>
#include <mutex>
#include <tuple>

using namespace gnn::runtime;

static Status checkSparse(const char *call, cusparseStatus_t s) {
  if (s == CUSPARSE_STATUS_SUCCESS)
    return Status();
  return Status::error(std::string(call) + ": " + cusparseGetErrorName(s) +
                       " (" + cusparseGetErrorString(s) + ")");
}

static Status checkBlas(const char *call, cublasStatus_t s) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return Status();
  return Status::error(std::string(call) + ": " + cublasGetStatusName(s) +
                       " (" + cublasGetStatusString(s) + ")");
}

#define GNN_SPARSE(call) GNN_RETURN_IF_ERROR(checkSparse(#call, (call)))
#define GNN_BLAS(call) GNN_RETURN_IF_ERROR(checkBlas(#call, (call)))

namespace {

/// Process-wide handles, created on first use.
struct Handles {
  cusparseHandle_t sparse = nullptr;
  cublasHandle_t blas = nullptr;
  Status status;
};

/// A handle's stream is part of its state: this is held from setting it to
/// the call that uses it, so threads on different streams do not take each
/// other's.
std::mutex &handleMutex() {
  static std::mutex m;
  return m;
}

Handles &handles() {
  static Handles h = [] {
    Handles r;
    // DeviceBuffer::allocate sets the device and checks for the driver.
    StatusOr<DeviceBuffer> probe = DeviceBuffer::allocate(0);
    if (!probe.ok()) {
      r.status = probe.error();
      return r;
    }
    r.status = checkSparse("cusparseCreate", cusparseCreate(&r.sparse));
    if (r.status.ok())
      r.status = checkBlas("cublasCreate", cublasCreate(&r.blas));
    return r;
  }();
  return h;
}

/// One cached SpMM plan: descriptors and workspace for a graph and width.
struct SpmmPlan {
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnMatDescr_t x = nullptr, y = nullptr;
  DeviceBuffer workspace;
  DeviceBuffer values; ///< CSR-ordered weights (or ones)
  ~SpmmPlan() {
    if (a)
      cusparseDestroySpMat(a);
    if (x)
      cusparseDestroyDnMat(x);
    if (y)
      cusparseDestroyDnMat(y);
  }
};

/// Everything cached on one graph. SpMM plans are per (width, stream): the
/// permuted weights and the cuSPARSE workspace are written and read in one
/// stream's order, so runs on other streams need their own.
struct GraphLibraryState {
  std::mutex mutex;
  std::map<std::pair<int64_t, cudaStream_t>, std::unique_ptr<SpmmPlan>> spmm;
  DeviceBuffer ones;
};

template <typename I>
__global__ void gatherWeights(const float *w, const I *csrEdge, int64_t e,
                              float *out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < e;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = w[csrEdge[i]];
}

__global__ void fillOnes(float *out, int64_t e) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < e;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = 1.0f;
}

unsigned blocks(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 1 << 20)));
}

} // namespace

Status gnn::runtime::spmmCsr(const Graph &graph, const float *weights,
                             const float *x, float *y, int64_t cols,
                             float alpha, float beta, cudaStream_t stream) {
  Handles &h = handles();
  GNN_RETURN_IF_ERROR(h.status);
  GraphLibraryState *statePtr;
  {
    static std::mutex creation;
    std::lock_guard<std::mutex> lock(creation);
    std::shared_ptr<void> &slot = graph.libraryState();
    if (!slot)
      slot = std::make_shared<GraphLibraryState>();
    statePtr = static_cast<GraphLibraryState *>(slot.get());
  }
  auto &state = *statePtr;
  std::lock_guard<std::mutex> lock(state.mutex);
  int64_t n = graph.numNodes(), e = graph.numEdges();
  bool wide = graph.indexType() == IndexType::Int64;

  // Values in CSR order: the given weights permuted, or ones (cached).
  const float *values = nullptr;
  std::unique_ptr<SpmmPlan> &plan = state.spmm[{cols, stream}];
  bool fresh = !plan;
  if (fresh)
    plan = std::make_unique<SpmmPlan>();
  if (weights) {
    if (plan->values.size() < size_t(e) * 4) {
      StatusOr<DeviceBuffer> b = DeviceBuffer::allocate(std::max<int64_t>(e, 1) * 4);
      if (!b.ok())
        return b.error();
      plan->values = std::move(*b);
    }
    if (e) {
      if (wide)
        gatherWeights<int64_t><<<blocks(e), 256, 0, stream>>>(
            weights, static_cast<const int64_t *>(graph.csrEdge()), e,
            plan->values.as<float>());
      else
        gatherWeights<int32_t><<<blocks(e), 256, 0, stream>>>(
            weights, static_cast<const int32_t *>(graph.csrEdge()), e,
            plan->values.as<float>());
    }
    values = plan->values.as<float>();
  } else {
    if (state.ones.size() < size_t(e) * 4) {
      StatusOr<DeviceBuffer> b = DeviceBuffer::allocate(std::max<int64_t>(e, 1) * 4);
      if (!b.ok())
        return b.error();
      state.ones = std::move(*b);
      if (e) {
        fillOnes<<<blocks(e), 256, 0, stream>>>(state.ones.as<float>(), e);
        // Other streams read the ones too: have them written before then.
        if (cudaError_t err = cudaStreamSynchronize(stream); err != cudaSuccess)
          return Status::error(
              std::string("filling the SpMM's unit weights: ") +
              cudaGetErrorName(err));
      }
    }
    values = state.ones.as<float>();
  }
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
    return Status::error(std::string("weight permutation kernel: ") +
                         cudaGetErrorName(err));
  if (n == 0 || cols == 0)
    return Status();

  cusparseIndexType_t it = wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
  std::lock_guard<std::mutex> handleLock(handleMutex());
  GNN_SPARSE(cusparseSetStream(h.sparse, stream));
  if (fresh) {
    GNN_SPARSE(cusparseCreateCsr(&plan->a, n, n, e,
                                 const_cast<void *>(graph.csrRowPtr()),
                                 const_cast<void *>(graph.csrCol()),
                                 const_cast<float *>(values), it, it,
                                 CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    GNN_SPARSE(cusparseCreateDnMat(&plan->x, n, cols, cols,
                                   const_cast<float *>(x), CUDA_R_32F,
                                   CUSPARSE_ORDER_ROW));
    GNN_SPARSE(cusparseCreateDnMat(&plan->y, n, cols, cols, y, CUDA_R_32F,
                                   CUSPARSE_ORDER_ROW));
    size_t bytes = 0;
    GNN_SPARSE(cusparseSpMM_bufferSize(
        h.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
        CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, plan->a, plan->x, &beta,
        plan->y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    StatusOr<DeviceBuffer> ws = DeviceBuffer::allocate(std::max<size_t>(bytes, 1));
    if (!ws.ok())
      return ws.error();
    plan->workspace = std::move(*ws);
  } else {
    GNN_SPARSE(cusparseSpMatSetValues(plan->a, const_cast<float *>(values)));
    GNN_SPARSE(cusparseDnMatSetValues(plan->x, const_cast<float *>(x)));
    GNN_SPARSE(cusparseDnMatSetValues(plan->y, y));
  }
  GNN_SPARSE(cusparseSpMM(h.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                          CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, plan->a,
                          plan->x, &beta, plan->y, CUDA_R_32F,
                          CUSPARSE_SPMM_ALG_DEFAULT, plan->workspace.data()));
  return Status();
}

Status gnn::runtime::gemm(bool transA, bool transB, int64_t m, int64_t n,
                          int64_t k, float alpha, const float *a,
                          const float *b, float beta, float *c,
                          cudaStream_t stream) {
  Handles &h = handles();
  GNN_RETURN_IF_ERROR(h.status);
  if (m == 0 || n == 0)
    return Status();
  std::lock_guard<std::mutex> handleLock(handleMutex());
  GNN_BLAS(cublasSetStream(h.blas, stream));
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  int lda = static_cast<int>(transA ? m : k);
  int ldb = static_cast<int>(transB ? k : n);
  GNN_BLAS(cublasSgemm(h.blas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                       transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                       static_cast<int>(m), static_cast<int>(k), &alpha, b, ldb,
                       a, lda, &beta, c, static_cast<int>(n)));
  return Status();
}
