//===- Library.cu - cuSPARSE and cuBLAS steps -----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Library.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
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
  cublasLtHandle_t lt = nullptr;
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
    if (r.status.ok())
      r.status = checkBlas("cublasLtCreate", cublasLtCreate(&r.lt));
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

/// A cuBLASLt matmul with the bias epilogue for one shape (gemmBias): its
/// descriptors and the algorithm the heuristic chose (no workspace).
struct BiasPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t b = nullptr, a = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  BiasPlan() = default;
  BiasPlan(const BiasPlan &) = delete;
  BiasPlan &operator=(const BiasPlan &) = delete;
  ~BiasPlan() {
    if (op)
      cublasLtMatmulDescDestroy(op);
    for (cublasLtMatrixLayout_t l : {b, a, c})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
  }
};

/// The plans by (transB, relu, m, n, k), under handleMutex; emptied when it
/// holds kBiasPlans (sampled subgraphs bring a new m every step).
constexpr size_t kBiasPlans = 256;
using BiasPlanKey = std::tuple<bool, bool, int64_t, int64_t, int64_t>;
std::map<BiasPlanKey, std::unique_ptr<BiasPlan>> &biasPlans() {
  static auto *plans = new std::map<BiasPlanKey, std::unique_ptr<BiasPlan>>;
  return *plans;
}

/// Every row of row-major C (m x n) set to `bias` (gemmBias with k = 0),
/// through torch.relu with `relu`.
__global__ void broadcastRows(const float *bias, int64_t m, int64_t n,
                              float *c, bool relu) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < m * n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float v = bias[i % n];
    c[i] = relu && v <= 0.0f ? 0.0f : v;
  }
}

/// Everything cached on one graph. SpMM plans are per (width, element size,
/// stream): the permuted weights and the cuSPARSE workspace are written and
/// read in one stream's order, so runs on other streams need their own.
struct GraphLibraryState {
  std::mutex mutex;
  std::map<std::tuple<int64_t, int, cudaStream_t>, std::unique_ptr<SpmmPlan>>
      spmm;
  /// Ones of each element size (4, 8).
  std::map<int, DeviceBuffer> ones;
};

template <typename T, typename I>
__global__ void gatherWeights(const T *w, const I *csrEdge, int64_t e, T *out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < e;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = w[csrEdge[i]];
}

template <typename T> __global__ void fillOnes(T *out, int64_t e) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < e;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = T(1);
}

__global__ void fillDoubles(double *out, double value, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = value;
}

unsigned blocks(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 1 << 20)));
}

/// Permutes edge-list weights of `T` into CSR order.
template <typename T>
void launchGather(const void *w, const Graph &graph, int64_t e, void *out,
                  cudaStream_t stream) {
  if (graph.indexType() == IndexType::Int64)
    gatherWeights<T, int64_t><<<blocks(e), 256, 0, stream>>>(
        static_cast<const T *>(w),
        static_cast<const int64_t *>(graph.csrEdge()), e,
        static_cast<T *>(out));
  else
    gatherWeights<T, int32_t><<<blocks(e), 256, 0, stream>>>(
        static_cast<const T *>(w),
        static_cast<const int32_t *>(graph.csrEdge()), e,
        static_cast<T *>(out));
}

/// Checks that `type` is a float type a library step runs in (`halves`:
/// bf16 and f16 too).
Status checkStepType(const char *step, DType type, bool halves = false) {
  if (type == DType::F32 || type == DType::F64 || (halves && isHalf(type)))
    return Status();
  return Status::error(std::string(step) +
                       (halves ? ": expected f32, f64, bf16 or f16 operands"
                               : ": expected f32 or f64 operands") +
                       " (another type was given)");
}

} // namespace

Status gnn::runtime::spmmCsr(const Graph &graph, DType type,
                             const void *weights, const void *x, void *y,
                             int64_t cols, double alpha, double beta,
                             cudaStream_t stream) {
  GNN_RETURN_IF_ERROR(checkStepType("spmm", type));
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
  bool dbl = type == DType::F64;
  int bytesPer = dbl ? 8 : 4;
  cudaDataType dataType = dbl ? CUDA_R_64F : CUDA_R_32F;
  // cuSPARSE reads alpha and beta in the compute type.
  float alphaF = static_cast<float>(alpha), betaF = static_cast<float>(beta);
  const void *alphaP = dbl ? static_cast<const void *>(&alpha) : &alphaF;
  const void *betaP = dbl ? static_cast<const void *>(&beta) : &betaF;

  // Values in CSR order: the given weights permuted, or ones (cached).
  const void *values = nullptr;
  std::unique_ptr<SpmmPlan> &plan = state.spmm[{cols, bytesPer, stream}];
  bool fresh = !plan;
  if (fresh)
    plan = std::make_unique<SpmmPlan>();
  if (weights) {
    if (plan->values.size() < size_t(e) * bytesPer) {
      StatusOr<DeviceBuffer> b =
          DeviceBuffer::allocate(std::max<int64_t>(e, 1) * bytesPer);
      if (!b.ok())
        return b.error();
      plan->values = std::move(*b);
    }
    if (e) {
      if (dbl)
        launchGather<double>(weights, graph, e, plan->values.data(), stream);
      else
        launchGather<float>(weights, graph, e, plan->values.data(), stream);
    }
    values = plan->values.data();
  } else {
    DeviceBuffer &ones = state.ones[bytesPer];
    if (ones.size() < size_t(e) * bytesPer) {
      StatusOr<DeviceBuffer> b =
          DeviceBuffer::allocate(std::max<int64_t>(e, 1) * bytesPer);
      if (!b.ok())
        return b.error();
      ones = std::move(*b);
      if (e) {
        if (dbl)
          fillOnes<double><<<blocks(e), 256, 0, stream>>>(ones.as<double>(), e);
        else
          fillOnes<float><<<blocks(e), 256, 0, stream>>>(ones.as<float>(), e);
        // Other streams read the ones too: have them written before then.
        if (cudaError_t err = cudaStreamSynchronize(stream); err != cudaSuccess)
          return Status::error(
              std::string("filling the SpMM's unit weights: ") +
              cudaGetErrorName(err));
      }
    }
    values = ones.data();
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
    GNN_SPARSE(cusparseCreateCsr(
        &plan->a, n, n, e, const_cast<void *>(graph.csrRowPtr()),
        const_cast<void *>(graph.csrCol()), const_cast<void *>(values), it, it,
        CUSPARSE_INDEX_BASE_ZERO, dataType));
    GNN_SPARSE(cusparseCreateDnMat(&plan->x, n, cols, cols,
                                   const_cast<void *>(x), dataType,
                                   CUSPARSE_ORDER_ROW));
    GNN_SPARSE(cusparseCreateDnMat(&plan->y, n, cols, cols, y, dataType,
                                   CUSPARSE_ORDER_ROW));
    size_t bytes = 0;
    GNN_SPARSE(cusparseSpMM_bufferSize(
        h.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
        CUSPARSE_OPERATION_NON_TRANSPOSE, alphaP, plan->a, plan->x, betaP,
        plan->y, dataType, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    StatusOr<DeviceBuffer> ws = DeviceBuffer::allocate(std::max<size_t>(bytes, 1));
    if (!ws.ok())
      return ws.error();
    plan->workspace = std::move(*ws);
  } else {
    GNN_SPARSE(cusparseSpMatSetValues(plan->a, const_cast<void *>(values)));
    GNN_SPARSE(cusparseDnMatSetValues(plan->x, const_cast<void *>(x)));
    GNN_SPARSE(cusparseDnMatSetValues(plan->y, y));
  }
  GNN_SPARSE(cusparseSpMM(h.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                          CUSPARSE_OPERATION_NON_TRANSPOSE, alphaP, plan->a,
                          plan->x, betaP, plan->y, dataType,
                          CUSPARSE_SPMM_ALG_DEFAULT, plan->workspace.data()));
  return Status();
}

Status gnn::runtime::gemm(DType type, bool transA, bool transB, int64_t m,
                          int64_t n, int64_t k, double alpha, const void *a,
                          const void *b, double beta, void *c,
                          cudaStream_t stream) {
  GNN_RETURN_IF_ERROR(checkStepType("gemm", type, /*halves=*/true));
  Handles &h = handles();
  GNN_RETURN_IF_ERROR(h.status);
  if (m == 0 || n == 0)
    return Status();
  std::lock_guard<std::mutex> handleLock(handleMutex());
  GNN_BLAS(cublasSetStream(h.blas, stream));
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  // At least 1 (cuBLAS refuses 0 even where k = 0 leaves the matrix empty;
  // C = beta C then).
  int lda = static_cast<int>(std::max<int64_t>(transA ? m : k, 1));
  int ldb = static_cast<int>(std::max<int64_t>(transB ? k : n, 1));
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (type == DType::F64) {
    GNN_BLAS(cublasDgemm(h.blas, opB, opA, static_cast<int>(n),
                         static_cast<int>(m), static_cast<int>(k), &alpha,
                         static_cast<const double *>(b), ldb,
                         static_cast<const double *>(a), lda, &beta,
                         static_cast<double *>(c), static_cast<int>(n)));
    return Status();
  }
  float alphaF = static_cast<float>(alpha), betaF = static_cast<float>(beta);
  if (isHalf(type)) {
    // Storage in bf16 / f16, products and sums in f32 (alpha and beta are
    // f32 for CUBLAS_COMPUTE_32F).
    cudaDataType t = type == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
    GNN_BLAS(cublasGemmEx(h.blas, opB, opA, static_cast<int>(n),
                          static_cast<int>(m), static_cast<int>(k), &alphaF, b,
                          t, ldb, a, t, lda, &betaF, c, t, static_cast<int>(n),
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return Status();
  }
  GNN_BLAS(cublasSgemm(h.blas, opB, opA, static_cast<int>(n),
                       static_cast<int>(m), static_cast<int>(k), &alphaF,
                       static_cast<const float *>(b), ldb,
                       static_cast<const float *>(a), lda, &betaF,
                       static_cast<float *>(c), static_cast<int>(n)));
  return Status();
}

/// D = A B + D for one 16 x 8 x 8 tile on the FP64 tensor cores (sm_90+).
/// With g = lane / 4 and t = lane % 4, each lane holds A[g][t], A[g + 8][t],
/// A[g][t + 4], A[g + 8][t + 4] (a0..a3), B[t][g], B[t + 4][g] (b0, b1) and
/// D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1] (d0..d3): PTX ISA,
/// "Matrix fragments for mma.m16n8k8" (the .f64 layout is .tf32's).
__device__ __forceinline__ void dmma16x8x8(const double (&a)[4],
                                           const double (&b)[2],
                                           double (&d)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]),
                 "d"(b[1]));
#else
  __trap(); // the runtime is built for sm_90 (CMAKE_CUDA_ARCHITECTURES)
#endif
}

/// The tile of C one block of atbSlices computes (kRowSplitTile squared) and
/// the rows of its slice staged at a time. ProgramLowering sizes the slices
/// for this tile (about 128 blocks).
constexpr int kRowSplitTile = 64, kRowSplitRows = 32;

/// One 64 x 64 tile of Aᵀ B (blockIdx.y: rows of C, blockIdx.x: columns)
/// over the rows of slice blockIdx.z, in double precision on the FP64 tensor
/// cores: 128 threads, each warp a 32 x 32 quarter of the tile as 2 x 4 mma
/// tiles of 16 x 8, 8 rows of the slice per mma. The f32 tiles are widened to
/// double once, as they are staged in shared memory (products of f32 values
/// are exact in double; every sum is a double sum); the next 32 rows are
/// read into registers while the mma's run on these. The mma's sums run in a
/// fixed order: deterministic, though not the same bits as a sequential sum
/// over the rows. (For 180,000 x 128 x 256 on an H200: a SIMT kernel took
/// 1.4 ms, 32 x 32 tiles of m8n8k4 mma's 0.73 ms, 64 x 64 tiles of them
/// 0.56 ms, cuBLAS's SGEMM 0.25: bench/results/row-split-s25/.)
///
/// RowSums: the blocks of C's first column tile also sum A's columns over
/// the slice (a bias gradient beside its weight's: ΣA over the rows), into
/// the slice's partials after C's m x n (`stride` doubles a slice). Thread t
/// stages column t % 64 of A's tile only (the staging walks 128 values of
/// 64 columns), so it adds the values it stages, every other row of the
/// slice, in order; the two threads of a column are added at the end, in
/// thread order: deterministic.
template <bool RowSums>
__global__ void __launch_bounds__(128)
    atbSlices(const float *__restrict__ a, const float *__restrict__ b,
              double *partials, int64_t m, int64_t n, int64_t k,
              int64_t rows, int64_t stride) {
  constexpr int T = kRowSplitTile, R = kRowSplitRows;
  constexpr int kPer = R * T / 128; // staged values per thread and operand
  // Rows padded to T + 4 doubles: a half-warp's fragment reads (4 rows by 8
  // columns) then fall in 16 different 8-byte banks.
  __shared__ double sa[R][T + 4], sb[R][T + 4];
  int64_t i0 = int64_t(blockIdx.y) * T, j0 = int64_t(blockIdx.x) * T;
  int64_t r0 = int64_t(blockIdx.z) * rows;
  int64_t r1 = r0 + rows < k ? r0 + rows : k;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int wi = (warp / 2) * (T / 2), wj = (warp % 2) * (T / 2); // warp's quarter
  int g = lane / 4, t = lane % 4; // fragment coordinates
  constexpr int UM = T / 32, UN = T / 16; // 16 x 8 mma tiles per warp
  double acc[UM][UN][4] = {};
  // (RowSums: only the first column tile's blocks sum A.)
  const bool sumA = RowSums && blockIdx.x == 0;
  double colSum = 0;
  float pa[kPer], pb[kPer];
  auto load = [&](int64_t r) {
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      int e = threadIdx.x + 128 * p, q = e / T, col = e % T;
      int64_t row = r + q;
      bool in = row < r1;
      pa[p] = in && i0 + col < m ? a[row * m + i0 + col] : 0.0f;
      pb[p] = in && j0 + col < n ? b[row * n + j0 + col] : 0.0f;
    }
  };
  if (r0 < r1)
    load(r0);
  for (int64_t r = r0; r < r1; r += R) {
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      int e = threadIdx.x + 128 * p, q = e / T, col = e % T;
      sa[q][col] = double(pa[p]);
      sb[q][col] = double(pb[p]);
      if (sumA)
        colSum += double(pa[p]); // (column threadIdx.x % T: 128 = 2 T)
    }
    __syncthreads();
    if (r + R < r1)
      load(r + R);
#pragma unroll
    for (int q = 0; q < R; q += 8) {
      // A's operand is Aᵀ (rows of C by rows of the slice), B's is B.
      double fa[UM][4], fb[UN][2];
#pragma unroll
      for (int u = 0; u < UM; ++u) {
        int i = wi + u * 16 + g;
        fa[u][0] = sa[q + t][i];
        fa[u][1] = sa[q + t][i + 8];
        fa[u][2] = sa[q + t + 4][i];
        fa[u][3] = sa[q + t + 4][i + 8];
      }
#pragma unroll
      for (int v = 0; v < UN; ++v) {
        fb[v][0] = sb[q + t][wj + v * 8 + g];
        fb[v][1] = sb[q + t + 4][wj + v * 8 + g];
      }
#pragma unroll
      for (int u = 0; u < UM; ++u)
#pragma unroll
        for (int v = 0; v < UN; ++v)
          dmma16x8x8(fa[u], fb[v], acc[u][v]);
    }
    __syncthreads();
  }
  double *out = partials + int64_t(blockIdx.z) * stride;
#pragma unroll
  for (int u = 0; u < UM; ++u)
#pragma unroll
    for (int v = 0; v < UN; ++v)
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        int64_t i = i0 + wi + u * 16 + g + (h / 2) * 8,
                j = j0 + wj + v * 8 + t * 2 + h % 2;
        if (i < m && j < n)
          out[i * n + j] = acc[u][v][h];
      }
  if (sumA) {
    // (sa is free: the loop ended on a barrier.)
    static_assert(128 == 2 * T, "two staging threads per column of A");
    if (threadIdx.x >= T)
      sa[0][threadIdx.x - T] = colSum;
    __syncthreads();
    if (threadIdx.x < T && i0 + threadIdx.x < m)
      out[m * n + i0 + threadIdx.x] = colSum + sa[0][threadIdx.x];
  }
}

/// The narrower side (m or n) of C up to which atbNarrow runs; its block:
/// 64 indices of the wider side by narrowGroups(N) groups of rows of the
/// slice, each thread kNarrowUnroll rows at a time. 8 groups of 4 rows
/// were the best of 4, 8 and 16 groups by 1, 2, 4 and 8 rows on an H100
/// (bench/probes/atb/narrow.cu, bench/results/checks-s73/); 16 x 64 rows of
/// 8 doubles is more shared memory than a block has, so 4 groups there.
/// The narrow operand is staged in shared memory kNarrowStaged values (512 /
/// N rows) at a time: of 2, 4 and 8 unrolled steps a stage, 4 were the best
/// for N = 4 and 2 for N = 8; for N = 16 neither 2 nor 4 won at every slice
/// count (300K x 200 x 16 at 64, 128 and 256 slices: 344, 261, 260 us with
/// 2, 318, 360, 284 with 4), 2 is kept (bench/probes/atb/narrow2.cu,
/// bench/results/checks-s82/).
constexpr int kNarrowMax = 16, kNarrowWide = 64, kNarrowUnroll = 4,
              kNarrowStaged = 512;
constexpr int narrowGroups(int n) { return n <= 8 ? 8 : 4; }

/// atbSlices for a C with at most kNarrowMax rows (NarrowA: A has m <= 16
/// columns) or columns (B has n <= 16): a weight gradient of a narrow
/// Linear, such as GINE's edge projection (edge_dim 4 against 64
/// channels), where a 64 x 64 tile of mma's computes 16 times the useful
/// products and stages the zeros. A thread owns one index w of the wide
/// side and all N (>= the narrow size) of the narrow side, and sums its N
/// elements of C in double over every G-th row of the slice (G groups),
/// kNarrowUnroll rows' loads in flight at a time (products of f32 values
/// are exact in double); the groups' sums are then added in group order:
/// the same bits every run. The wide operand's rows are read coalesced.
/// The narrow one's rows (the same N values for the 64 threads of a group)
/// are widened to double once per block, as they are staged in shared
/// memory, the next stage's read into registers while this one's run: a
/// thread then widens one value a row, not N + 1 (widening to double runs
/// at a quarter of the FP64 FMA's rate; on an H100, 300K x 200 x 16 took
/// 1,225-1,239 us with each thread widening its own copies and 260-344 staged,
/// 500K x 8 x 128 335 and 192, GINE's 76,008 x 64 x 4 27.5 and 23.4).
/// blockIdx.x: the wide side, blockIdx.z: the slice; the partials are
/// atbSlices' (RowSums: A's column sums too, as there; a thread adds the
/// A values it reads, and with a narrow A every thread of a group reads
/// the same ones: group g's lane 0 stands for it).
template <int N, bool NarrowA, bool RowSums>
__global__ void __launch_bounds__(kNarrowWide *narrowGroups(N))
    atbNarrow(const float *__restrict__ a, const float *__restrict__ b,
              double *partials, int64_t m, int64_t n, int64_t k,
              int64_t rows, int64_t stride) {
  constexpr int G = narrowGroups(N), U = kNarrowUnroll;
  constexpr int Threads = kNarrowWide * G, Stage = kNarrowStaged / N;
  static_assert(Stage % (G * U) == 0, "whole steps a stage");
  // The narrow values a thread stages (Stage rows of N).
  constexpr int Per = (Stage * N + Threads - 1) / Threads;
  // A's sums a thread keeps: one (its wide index) or N (a narrow A's).
  constexpr int S = RowSums ? (NarrowA ? N : 1) : 0;
  // The stage's narrow rows, widened (every lane of a warp then reads the
  // same value: a broadcast).
  __shared__ double xs[Stage][N];
  // The groups' sums of C (and of a wide A's column); a narrow A's column
  // sums of groups 1.. (their lane 0's).
  __shared__ double sums[G - 1][N + (S == 1)][kNarrowWide];
  __shared__ double narrowSums[G - 1][S == N ? N : 1];
  int lane = threadIdx.x % kNarrowWide, group = threadIdx.x / kNarrowWide;
  int64_t w = int64_t(blockIdx.x) * kNarrowWide + lane;
  const int64_t wide = NarrowA ? n : m, narrow = NarrowA ? m : n;
  const float *__restrict__ wideOp = NarrowA ? b : a;
  const float *__restrict__ narrowOp = NarrowA ? a : b;
  int64_t r0 = int64_t(blockIdx.z) * rows;
  int64_t r1 = r0 + rows < k ? r0 + rows : k;
  double acc[N + S] = {};
  // Thread t stages element e = t + p * Threads of the stage (row e / N,
  // column e % N): a zero past the slice or the narrow side.
  float staged[Per];
  auto load = [&](int64_t s) {
#pragma unroll
    for (int p = 0; p < Per; ++p) {
      int e = threadIdx.x + p * Threads, q = e % N;
      int64_t row = s + e / N;
      staged[p] = e < Stage * N && row < r1 && q < narrow
                      ? __ldg(narrowOp + row * narrow + q)
                      : 0.0f;
    }
  };
  if (r0 < r1)
    load(r0);
  const bool active = w < wide;
  for (int64_t s = r0; s < r1; s += Stage) {
    if (s != r0)
      __syncthreads(); // (the last stage's reads are done)
#pragma unroll
    for (int p = 0; p < Per; ++p) {
      int e = threadIdx.x + p * Threads;
      if (e < Stage * N)
        xs[e / N][e % N] = double(staged[p]);
    }
    __syncthreads();
    if (s + Stage < r1)
      load(s + Stage);
    int64_t count = r1 - s < Stage ? r1 - s : Stage;
    if (!active)
      continue;
    // This group's rows of the stage, in order, U at a time (Stage is a
    // multiple of U G: every stage starts at the group's next row).
    for (int i = group; i < count; i += U * G) {
      float v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        int row = i + u * G;
        v[u] = row < count ? __ldg(wideOp + (s + row) * wide + w) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        int row = i + u * G;
        if (row >= count)
          break;
        double dv = double(v[u]);
#pragma unroll
        for (int q = 0; q < N; ++q)
          acc[q] += xs[row][q] * dv;
        if constexpr (S == 1)
          acc[N] += dv;
        else if constexpr (S == N)
#pragma unroll
          for (int q = 0; q < N; ++q)
            acc[N + q] += xs[row][q];
      }
    }
  }
  if (group > 0) {
#pragma unroll
    for (int q = 0; q < N + (S == 1); ++q)
      sums[group - 1][q][lane] = acc[q];
    if constexpr (S == N)
      if (lane == 0)
#pragma unroll
        for (int q = 0; q < N; ++q)
          narrowSums[group - 1][q] = acc[N + q];
  }
  __syncthreads();
  if (group > 0 || !active)
    return;
  double *out = partials + int64_t(blockIdx.z) * stride;
#pragma unroll
  for (int q = 0; q < N; ++q) {
    if (q >= narrow)
      break;
    double s = acc[q];
#pragma unroll
    for (int g = 0; g < G - 1; ++g)
      s += sums[g][q][lane];
    out[NarrowA ? q * n + w : w * n + q] = s;
  }
  if constexpr (S == 1) {
    double s = acc[N];
#pragma unroll
    for (int g = 0; g < G - 1; ++g)
      s += sums[g][N][lane];
    out[m * n + w] = s;
  } else if constexpr (S == N) {
    // (Every lane of a group summed the same values; the first block's
    // lane 0 stores them.)
    if (blockIdx.x != 0 || lane != 0)
      return;
#pragma unroll
    for (int q = 0; q < N; ++q) {
      if (q >= narrow)
        break;
      double s = acc[N + q];
#pragma unroll
      for (int g = 0; g < G - 1; ++g)
        s += narrowSums[g][q];
      out[m * n + q] = s;
    }
  }
}

/// Launches atbNarrow<N, NarrowA> with N the first of 4, 8, 16 that holds
/// the narrow side.
template <bool NarrowA, bool RowSums>
static void launchNarrow(const float *a, const float *b, double *partials,
                         int64_t m, int64_t n, int64_t k, int64_t chunks,
                         int64_t rows, int64_t stride, cudaStream_t stream) {
  int64_t wide = NarrowA ? n : m, narrow = NarrowA ? m : n;
  dim3 grid(unsigned((wide + kNarrowWide - 1) / kNarrowWide), 1,
            unsigned(chunks));
  if (narrow <= 4)
    atbNarrow<4, NarrowA, RowSums>
        <<<grid, kNarrowWide * narrowGroups(4), 0, stream>>>(
            a, b, partials, m, n, k, rows, stride);
  else if (narrow <= 8)
    atbNarrow<8, NarrowA, RowSums>
        <<<grid, kNarrowWide * narrowGroups(8), 0, stream>>>(
            a, b, partials, m, n, k, rows, stride);
  else
    atbNarrow<16, NarrowA, RowSums>
        <<<grid, kNarrowWide * narrowGroups(16), 0, stream>>>(
            a, b, partials, m, n, k, rows, stride);
}

/// C = alpha * (the slices' sum) + beta * C: a block per 32 consecutive
/// elements of C, a lane per element; warp w sums the w-th of kSumWarps
/// runs of consecutive slices (in slice order), and lane l of warp 0 then
/// adds the warps' sums in warp order: one fixed order, so the result is
/// the same run to run. (A thread per element summing every slice in turn
/// took 11.6 us for a 64 x 64 weight gradient of 141 slices on an H200: 16
/// blocks, each thread a chain of 141 dependent loads; session 47.)
///
/// A slice's partials are `stride` doubles: C's mn, then (rowSums not null)
/// A's stride - mn column sums, stored to rowSums as they are (no alpha,
/// no beta).
constexpr int kSumWarps = 8;
__global__ void __launch_bounds__(32 * kSumWarps)
    sumSlices(const double *partials, int64_t chunks, int64_t mn,
              int64_t stride, double alpha, double beta, float *c,
              float *rowSums) {
  __shared__ double sums[kSumWarps][32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int64_t idx = int64_t(blockIdx.x) * 32 + lane;
  int64_t per = (chunks + kSumWarps - 1) / kSumWarps;
  int64_t z0 = warp * per, z1 = z0 + per < chunks ? z0 + per : chunks;
  double s = 0;
  if (idx < stride)
    for (int64_t z = z0; z < z1; ++z)
      s += partials[z * stride + idx];
  sums[warp][lane] = s;
  __syncthreads();
  if (warp != 0 || idx >= stride)
    return;
  double t = 0;
#pragma unroll
  for (int w = 0; w < kSumWarps; ++w)
    t += sums[w][lane];
  if (idx >= mn) {
    rowSums[idx - mn] = float(t);
    return;
  }
  t *= alpha;
  if (beta != 0)
    t += beta * double(c[idx]);
  c[idx] = float(t);
}

Status gnn::runtime::gemmBias(bool transB, int64_t m, int64_t n, int64_t k,
                              const float *a, const float *b,
                              const float *bias, float *c,
                              cudaStream_t stream, bool relu) {
  Handles &h = handles();
  GNN_RETURN_IF_ERROR(h.status);
  if (m == 0 || n == 0)
    return Status();
  if (k == 0) {
    broadcastRows<<<blocks(m * n), 256, 0, stream>>>(bias, m, n, c, relu);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? Status()
                            : Status::error(std::string("gemm bias: ") +
                                            cudaGetErrorName(e));
  }
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    return Status::error("gemm bias: sizes beyond 2^31 - 1");
  std::lock_guard<std::mutex> handleLock(handleMutex());
  // Row-major C = A op(B) is column-major Cᵀ = op(B)ᵀ Aᵀ: cuBLASLt's A is
  // our B (n x k after its op), its B our A (k x m), D is n x m, and the bias
  // (n elements) runs along D's rows, i.e. along each row of our C.
  auto &plans = biasPlans();
  auto key = std::make_tuple(transB, relu, m, n, k);
  auto it = plans.find(key);
  if (it == plans.end()) {
    if (plans.size() >= kBiasPlans)
      plans.clear();
    auto plan = std::make_unique<BiasPlan>();
    cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                      opA = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue =
        relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    GNN_BLAS(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F,
                                      CUDA_R_32F));
    GNN_BLAS(cublasLtMatmulDescSetAttribute(
        plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &opB, sizeof(opB)));
    GNN_BLAS(cublasLtMatmulDescSetAttribute(
        plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &opA, sizeof(opA)));
    GNN_BLAS(cublasLtMatmulDescSetAttribute(
        plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    // Stored matrices, column-major: B is n x k (ld n), or k x n (ld k)
    // transposed; A is k x m (ld k); C is n x m (ld n).
    GNN_BLAS(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_32F,
                                        transB ? k : n, transB ? n : k,
                                        transB ? k : n));
    GNN_BLAS(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_32F, k, m, k));
    GNN_BLAS(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_32F, n, m, n));
    cublasLtMatmulPreference_t pref = nullptr;
    GNN_BLAS(cublasLtMatmulPreferenceCreate(&pref));
    size_t workspace = 0;
    // The runtime's buffers are 16-byte aligned (cuBLASLt assumes 256).
    uint32_t align = 16;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
        sizeof(workspace));
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &align,
                                                  sizeof(align));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(h.lt, plan->op, plan->b, plan->a,
                                          plan->c, plan->c, pref, 1, &result,
                                          &found);
    cublasLtMatmulPreferenceDestroy(pref);
    GNN_BLAS(st);
    if (found == 0)
      return Status::error("gemm bias: cuBLASLt has no algorithm for " +
                           std::to_string(m) + " x " + std::to_string(n) +
                           " x " + std::to_string(k));
    plan->algo = result.algo;
    it = plans.emplace(key, std::move(plan)).first;
  }
  BiasPlan &plan = *it->second;
  GNN_BLAS(cublasLtMatmulDescSetAttribute(
      plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  float alpha = 1.0f, beta = 0.0f;
  GNN_BLAS(cublasLtMatmul(h.lt, plan.op, &alpha, b, plan.b, a, plan.a, &beta,
                          c, plan.c, c, plan.c, &plan.algo, nullptr, 0,
                          stream));
  return Status();
}

Status gnn::runtime::gemmRowSplit(int64_t m, int64_t n, int64_t k,
                                  int64_t chunks, double alpha, const float *a,
                                  const float *b, double beta, float *c,
                                  double *partials, cudaStream_t stream,
                                  float *rowSums) {
  if (m == 0)
    return Status();
  if (n == 0 && rowSums)
    return Status::error("gemm row split: A's column sums with a B of no "
                         "columns (expected at least one)");
  if (n == 0)
    return Status();
  if (chunks < 1 || chunks > 65535)
    return Status::error("gemm row split: " + std::to_string(chunks) +
                         " slices (expected 1 to 65535)");
  int64_t rows = (k + chunks - 1) / chunks;
  constexpr int T = kRowSplitTile;
  int64_t mn = m * n, stride = mn + (rowSums ? m : 0);
  if ((stride + 31) / 32 > INT32_MAX)
    return Status::error("gemm row split: " + std::to_string(mn) +
                         " elements of C (at most 2^31 - 1 blocks of 32)");
  // The narrow kernel where one side of C is at most kNarrowMax wide (the
  // narrower side, where both are: its wide side runs along the block).
  if (std::min(m, n) <= kNarrowMax) {
    if (m <= n)
      rowSums ? launchNarrow<true, true>(a, b, partials, m, n, k, chunks, rows,
                                         stride, stream)
              : launchNarrow<true, false>(a, b, partials, m, n, k, chunks,
                                          rows, stride, stream);
    else
      rowSums ? launchNarrow<false, true>(a, b, partials, m, n, k, chunks,
                                          rows, stride, stream)
              : launchNarrow<false, false>(a, b, partials, m, n, k, chunks,
                                           rows, stride, stream);
  } else {
    if ((m + T - 1) / T > 65535)
      return Status::error("gemm row split: " + std::to_string(m) +
                           " rows of C (at most 65535 * " +
                           std::to_string(T) + ")");
    dim3 grid(unsigned((n + T - 1) / T), unsigned((m + T - 1) / T),
              unsigned(chunks));
    if (rowSums)
      atbSlices<true><<<grid, 128, 0, stream>>>(a, b, partials, m, n, k, rows,
                                                stride);
    else
      atbSlices<false><<<grid, 128, 0, stream>>>(a, b, partials, m, n, k,
                                                 rows, stride);
  }
  sumSlices<<<unsigned((stride + 31) / 32), 32 * kSumWarps, 0, stream>>>(
      partials, chunks, mn, stride, alpha, beta, c, rowSums);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::error(std::string("gemm row split: ") +
                         cudaGetErrorName(e));
  return Status();
}

Status gnn::runtime::fill64(void *data, double value, int64_t n,
                            cudaStream_t stream) {
  if (n <= 0)
    return Status();
  fillDoubles<<<blocks(n), 256, 0, stream>>>(static_cast<double *>(data), value,
                                             n);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
    return Status::error(std::string("fill kernel: ") + cudaGetErrorName(err));
  return Status();
}
