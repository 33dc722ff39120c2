// A probe (session 83): the tall, narrow GEMMs of a layer (C[m, n] = A[m, k]
// op(B) (+ bias), k and n at most 128: a Linear on node rows, dX = dY W)
// take cuBLAS 18-27 us for 9K-36K x 64 x 64 on an H100 (session 74,
// lt_algos.cu), where their bytes move in about 6. Times cublasSgemm and
// cuBLASLt's first heuristic algorithm (with the bias epilogue) against
// one kernel: B staged in shared memory as [k][n], each thread RM rows x 4
// columns (one float4 of C a row), A read straight from global memory
// (L1) as float4 along k ("direct") or staged per block ("staged"). B is
// read along its stored rows and written to [k][n + 4] (call 1 of session
// 83 read a transposed B across its rows, uncoalesced: 300K x 64 x 64 took
// 173 us against 106 untransposed; bench/results/checks-s83/). Each
// checked against a double product (relative 1e-5); median of 50 runs,
// CUDA events, data resident.
//   nvcc -O3 -arch=sm_90 skinny.cu -lcublasLt -lcublas -o skinny && ./skinny
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    if ((x) != 0) {                                                            \
      printf("%s:%d failed (%d)\n", __FILE__, __LINE__, int(x));               \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

constexpr int kThreads = 256;

// C = A op(B) (+ bias): n % 4 == 0, k % 4 == 0, n / 4 <= 256.
template <int RM, bool TransB, bool Staged>
__global__ void __launch_bounds__(kThreads)
    skinny(const float *__restrict__ a, const float *__restrict__ b,
           const float *__restrict__ bias, float *__restrict__ c, int64_t m,
           int n, int k) {
  extern __shared__ float4 smem4[];
  // B as [k][ldb]: read along its rows (coalesced either way), the rows
  // padded by 4 so that a transposed B's column writes spread over banks.
  const int ldb = n + 4;
  float *bs = reinterpret_cast<float *>(smem4);
  const int groups = n / 4, rowThreads = kThreads / groups;
  const int tm = rowThreads * RM;
  float *as = bs + k * ldb; // staged: [k][tm + 1]
  const int stride = tm + 1;
  for (int i = threadIdx.x; i < k * n; i += kThreads) {
    if (TransB) { // B [n][k]
      int j = i / k, kk = i - j * k;
      bs[kk * ldb + j] = __ldg(b + i);
    } else {
      int kk = i / n, j = i - kk * n;
      bs[kk * ldb + j] = __ldg(b + i);
    }
  }
  const int64_t row0 = (int64_t)blockIdx.x * tm;
  if (Staged) {
    const int q4 = k / 4;
    for (int i = threadIdx.x; i < tm * q4; i += kThreads) {
      int r = i / q4, q = i - r * q4;
      int64_t gr = row0 + r;
      float4 v = gr < m ? __ldg(reinterpret_cast<const float4 *>(a + gr * k) + q)
                        : make_float4(0, 0, 0, 0);
      as[(4 * q + 0) * stride + r] = v.x;
      as[(4 * q + 1) * stride + r] = v.y;
      as[(4 * q + 2) * stride + r] = v.z;
      as[(4 * q + 3) * stride + r] = v.w;
    }
  }
  __syncthreads();
  const int g = threadIdx.x % groups, rt = threadIdx.x / groups;
  if (rt >= rowThreads)
    return;
  float acc[RM][4];
#pragma unroll
  for (int i = 0; i < RM; ++i)
    acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  const int64_t r0 = row0 + (int64_t)rt * RM;
  if (Staged) {
    for (int kk = 0; kk < k; ++kk) {
      float4 bv = reinterpret_cast<const float4 *>(bs + kk * ldb)[g];
#pragma unroll
      for (int i = 0; i < RM; ++i) {
        float av = as[kk * stride + rt * RM + i];
        acc[i][0] = fmaf(av, bv.x, acc[i][0]);
        acc[i][1] = fmaf(av, bv.y, acc[i][1]);
        acc[i][2] = fmaf(av, bv.z, acc[i][2]);
        acc[i][3] = fmaf(av, bv.w, acc[i][3]);
      }
    }
  } else {
    const float4 *arow[RM];
#pragma unroll
    for (int i = 0; i < RM; ++i)
      arow[i] = reinterpret_cast<const float4 *>(
          a + (r0 + i < m ? r0 + i : m - 1) * k);
    for (int q = 0; q < k / 4; ++q) {
      float4 av[RM];
#pragma unroll
      for (int i = 0; i < RM; ++i)
        av[i] = __ldg(arow[i] + q);
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        float4 bv = reinterpret_cast<const float4 *>(bs + (4 * q + s) * ldb)[g];
#pragma unroll
        for (int i = 0; i < RM; ++i) {
          float x = s == 0 ? av[i].x : s == 1 ? av[i].y : s == 2 ? av[i].z : av[i].w;
          acc[i][0] = fmaf(x, bv.x, acc[i][0]);
          acc[i][1] = fmaf(x, bv.y, acc[i][1]);
          acc[i][2] = fmaf(x, bv.z, acc[i][2]);
          acc[i][3] = fmaf(x, bv.w, acc[i][3]);
        }
      }
    }
  }
  float4 bb = bias ? __ldg(reinterpret_cast<const float4 *>(bias) + g)
                   : make_float4(0, 0, 0, 0);
#pragma unroll
  for (int i = 0; i < RM; ++i)
    if (r0 + i < m)
      reinterpret_cast<float4 *>(c + (r0 + i) * n)[g] =
          make_float4(acc[i][0] + bb.x, acc[i][1] + bb.y, acc[i][2] + bb.z,
                      acc[i][3] + bb.w);
}

template <class F> static float median(F f) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 5; ++i) f();
  std::vector<float> ts;
  for (int i = 0; i < 50; ++i) {
    cudaEventRecord(e0);
    f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    ts.push_back(ms * 1000);
  }
  std::sort(ts.begin(), ts.end());
  return ts[25];
}

template <int RM, bool TransB, bool Staged>
static void launch(const float *a, const float *b, const float *bias, float *c,
                   int64_t m, int n, int k) {
  int groups = n / 4, rowThreads = kThreads / groups, tm = rowThreads * RM;
  size_t sm = size_t(k) * (n + 4) * 4 + (Staged ? size_t(k) * (tm + 1) * 4 : 0);
  static bool set = false;
  if (!set) {
    cudaFuncSetAttribute(skinny<RM, TransB, Staged>,
                         cudaFuncAttributeMaxDynamicSharedMemorySize, 160 * 1024);
    set = true;
  }
  int64_t blocks = (m + tm - 1) / tm;
  skinny<RM, TransB, Staged><<<blocks, kThreads, sm>>>(a, b, bias, c, m, n, k);
}

int main() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("device %s\n", prop.name);
  printf("| m x n x k | product | kernel | us | check |\n| --- | --- | --- | --- | --- |\n");
  struct Shape { int64_t m; int n, k; };
  for (Shape s : {Shape{35970, 64, 64}, Shape{8984, 64, 64}, Shape{2708, 64, 64},
                  Shape{19717, 64, 64}, Shape{300000, 64, 64}, Shape{1000000, 64, 64},
                  Shape{35970, 128, 128}, Shape{169343, 128, 128}, Shape{100000, 16, 64},
                  Shape{100000, 64, 16}, Shape{19717, 128, 64}, Shape{19717, 64, 128}}) {
    const int64_t m = s.m;
    const int n = s.n, k = s.k;
    std::vector<float> ha(m * k), hw(int64_t(n) * k), hbias(n);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto &v : ha) v = d(rng);
    for (auto &v : hw) v = d(rng);
    for (auto &v : hbias) v = d(rng);
    float *a, *w, *bias, *c;
    CK(cudaMalloc(&a, m * k * 4));
    CK(cudaMalloc(&w, int64_t(n) * k * 4));
    CK(cudaMalloc(&bias, n * 4));
    CK(cudaMalloc(&c, m * n * 4));
    CK(cudaMemcpy(a, ha.data(), m * k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), int64_t(n) * k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bias, hbias.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<float> hc(m * n);
    cublasHandle_t h;
    CK(cublasCreate(&h));
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    for (int transB = 0; transB < 2; ++transB) {
      const bool withBias = transB; // the forward's Linear has its bias
      auto check = [&]() {
        CK(cudaMemcpy(hc.data(), c, m * n * 4, cudaMemcpyDeviceToHost));
        double worst = 0;
        for (int64_t i = 0; i < m; i += std::max<int64_t>(1, m / 997))
          for (int64_t j = 0; j < n; ++j) {
            double t = withBias ? hbias[j] : 0, mag = std::fabs(t);
            for (int64_t q = 0; q < k; ++q) {
              double p = double(ha[i * k + q]) * (transB ? hw[j * k + q] : hw[q * n + j]);
              t += p;
              mag += std::fabs(p);
            }
            worst = std::max(worst, std::fabs(hc[i * n + j] - t) / (1e-30 + mag));
          }
        return worst;
      };
      float one = 1, zero = 0;
      cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
      const char *prod = transB ? "A Wt + bias" : "A W";
      if (!withBias) {
        auto sg = [&]() {
          cublasSgemm(h, opB, CUBLAS_OP_N, n, int(m), k, &one, w, transB ? k : n, a, k,
                      &zero, c, n);
        };
        float t = median(sg);
        cudaMemset(c, 0xff, m * n * 4);
        sg();
        CK(cudaDeviceSynchronize());
        printf("| %lld x %d x %d | %s | cublasSgemm | %.1f | %.1e |\n", (long long)m, n, k,
               prod, t, check());
      } else {
        cublasLtMatmulDesc_t op;
        CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        cublasOperation_t opA = CUBLAS_OP_N;
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opB, sizeof(opB)));
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opA, sizeof(opA)));
        cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
        cublasLtMatrixLayout_t lb, la, lc;
        CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, transB ? k : n, transB ? n : k, transB ? k : n));
        CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, k, m, k));
        CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, n));
        cublasLtMatmulPreference_t pref;
        CK(cublasLtMatmulPreferenceCreate(&pref));
        size_t wsBytes = 0;
        CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof(wsBytes)));
        cublasLtMatmulHeuristicResult_t res[1];
        int found = 0;
        CK(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, pref, 1, res, &found));
        auto f = [&]() {
          cublasLtMatmul(lt, op, &one, w, lb, a, la, &zero, c, lc, c, lc, &res[0].algo,
                         nullptr, 0, 0);
        };
        float t = median(f);
        cudaMemset(c, 0xff, m * n * 4);
        f();
        CK(cudaDeviceSynchronize());
        printf("| %lld x %d x %d | %s | cuBLASLt #0 | %.1f | %.1e |\n", (long long)m, n, k,
               prod, t, check());
        cublasLtMatmulPreferenceDestroy(pref);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatrixLayoutDestroy(lc);
        cublasLtMatmulDescDestroy(op);
      }
      const float *bp = withBias ? bias : nullptr;
#define VARIANT(RM, ST)                                                        \
  {                                                                            \
    auto f = [&]() {                                                           \
      if (transB) launch<RM, true, ST>(a, w, bp, c, m, n, k);                  \
      else launch<RM, false, ST>(a, w, bp, c, m, n, k);                        \
    };                                                                         \
    float t = median(f);                                                       \
    cudaMemset(c, 0xff, m * n * 4);                                            \
    f();                                                                       \
    CK(cudaDeviceSynchronize());                                               \
    printf("| %lld x %d x %d | %s | %s RM=%d | %.1f | %.1e |\n", (long long)m, \
           n, k, prod, ST ? "staged" : "direct", RM, t, check());              \
  }
      VARIANT(1, false) VARIANT(2, false) VARIANT(4, false) VARIANT(8, false)
      VARIANT(2, true) VARIANT(4, true) VARIANT(8, true)
    }
    cublasLtDestroy(lt);
    cublasDestroy(h);
    cudaFree(a); cudaFree(w); cudaFree(bias); cudaFree(c);
  }
  return 0;
}
