// A probe (session 84): may a GEMM's ReLU run in cuBLASLt's epilogue
// (CUBLASLT_EPILOGUE_RELU_BIAS) instead of an elementwise kernel after the
// GEMM (what gnnc's Programs run between an MLP's two Linears: gemm with
// the bias epilogue, then `select(h <= 0, 0, h)`)? Only if it keeps
// torch.relu's values: NaN stays NaN (PyTorch's relu and gnnc's reference
// propagate it; a NaN turned into 0 is a silent wrong answer), and every
// other value is `h <= 0 ? 0 : h`. The rows of A hold NaN, +-Inf, -0 and
// values whose products cancel, so that h is NaN, +-Inf, +-0 and both
// signs somewhere. Then the time of both ways on a layer's shape (36K x 64
// x 64, the QM9 batch of 4,096 molecules; 300K x 64 x 64), CUDA events,
// median of 50 runs each, data resident.
//   nvcc -O3 -arch=sm_90 relu_epilogue.cu -lcublasLt -o relu_epilogue && ./relu_epilogue
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    if ((x) != 0) {                                                            \
      printf("%s:%d failed (%d)\n", __FILE__, __LINE__, int(x));               \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void relu(const float *h, float *y, int64_t n) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = h[i];
    y[i] = v <= 0.0f ? 0.0f : v;
  }
}

struct Lt {
  cublasLtHandle_t h;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo;
};

// Row-major C[m, n] = A[m, k] Bᵀ (B [n, k]) + bias as cuBLASLt's
// column-major Cᵀ = B Aᵀ (gnnc's gemmBias, lib/Runtime/Library.cu).
static Lt plan(cublasLtHandle_t h, int64_t m, int n, int k,
               cublasLtEpilogue_t epilogue) {
  Lt p{};
  p.h = h;
  cublasOperation_t opB = CUBLAS_OP_T, opA = CUBLAS_OP_N;
  CK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &opB,
                                    sizeof(opB)));
  CK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &opA,
                                    sizeof(opA)));
  CK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                    &epilogue, sizeof(epilogue)));
  CK(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_32F, k, n, k));
  CK(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_32F, k, m, k));
  CK(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, n, m, n));
  cublasLtMatmulPreference_t pref;
  CK(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = 0;
  CK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  uint32_t align = 16;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    CK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align)));
  cublasLtMatmulHeuristicResult_t r{};
  int found = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(h, p.op, p.b, p.a, p.c, p.c, pref, 1, &r,
                                    &found));
  if (!found) {
    printf("no algorithm\n");
    exit(1);
  }
  p.algo = r.algo;
  cublasLtMatmulPreferenceDestroy(pref);
  return p;
}

static void run(const Lt &p, const float *a, const float *b, const float *bias,
                float *c) {
  CK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                    &bias, sizeof(bias)));
  float one = 1, zero = 0;
  CK(cublasLtMatmul(p.h, p.op, &one, b, p.b, a, p.a, &zero, c, p.c, c, p.c,
                    &p.algo, nullptr, 0, 0));
}

template <typename F> static float median_us(F f) {
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  std::vector<float> t;
  for (int i = 0; i < 60; ++i) {
    cudaEventRecord(s);
    f();
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    if (i >= 10)
      t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cublasLtHandle_t h;
  CK(cublasLtCreate(&h));
  // Semantics: 64 rows x 64 x 64.
  {
    const int64_t m = 64;
    const int n = 64, k = 64;
    std::vector<float> A(m * k), B(n * k), bias(n);
    std::mt19937 g(1);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto &v : A)
      v = u(g);
    for (auto &v : B)
      v = u(g);
    for (auto &v : bias)
      v = u(g);
    float nan = std::nanf("");
    A[0 * k + 3] = nan;                                      // row 0: NaN
    A[1 * k + 5] = INFINITY;                                 // row 1: +-Inf
    A[2 * k + 7] = -INFINITY;                                // row 2
    for (int j = 0; j < k; ++j)                              // row 3: A = 0
      A[3 * k + j] = 0.0f;
    for (int j = 0; j < n; ++j) // row 3: h = bias = -0 or +0 in turn
      bias[j] = (j % 2) ? -0.0f : 0.0f;
    float *a, *b, *bi, *c1, *c2, *y;
    CK(cudaMalloc(&a, A.size() * 4));
    CK(cudaMalloc(&b, B.size() * 4));
    CK(cudaMalloc(&bi, n * 4));
    CK(cudaMalloc(&c1, m * n * 4));
    CK(cudaMalloc(&c2, m * n * 4));
    CK(cudaMalloc(&y, m * n * 4));
    CK(cudaMemcpy(a, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bi, bias.data(), n * 4, cudaMemcpyHostToDevice));
    Lt p1 = plan(h, m, n, k, CUBLASLT_EPILOGUE_BIAS);
    Lt p2 = plan(h, m, n, k, CUBLASLT_EPILOGUE_RELU_BIAS);
    run(p1, a, b, bi, c1);
    relu<<<(m * n + 255) / 256, 256>>>(c1, y, m * n);
    run(p2, a, b, bi, c2);
    CK(cudaDeviceSynchronize());
    std::vector<float> H(m * n), Y(m * n), E(m * n);
    CK(cudaMemcpy(H.data(), c1, m * n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(Y.data(), y, m * n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(E.data(), c2, m * n * 4, cudaMemcpyDeviceToHost));
    int nanIn = 0, nanKept = 0, bitsDiffer = 0, valueDiffer = 0, negZero = 0;
    for (int64_t i = 0; i < m * n; ++i) {
      if (std::isnan(H[i])) {
        ++nanIn;
        nanKept += std::isnan(E[i]);
        continue;
      }
      if (std::memcmp(&Y[i], &E[i], 4))
        ++bitsDiffer;
      if (!(Y[i] == E[i]))
        ++valueDiffer;
      negZero += E[i] == 0 && std::signbit(E[i]);
    }
    printf("semantics: %d NaN pre-activations, %d NaN after the epilogue "
           "(torch.relu keeps all); other elements: %d differ in value, %d in "
           "bits from select(h <= 0, 0, h) (%d -0 in the epilogue's)\n",
           nanIn, nanKept, valueDiffer, bitsDiffer, negZero);
    printf("RELU_BIAS %s\n", nanKept == nanIn && valueDiffer == 0
                                 ? "KEEPS torch.relu's values"
                                 : "DIFFERS from torch.relu");
  }
  // Time.
  for (int64_t m : {35970L, 300000L}) {
    const int n = 64, k = 64;
    float *a, *b, *bi, *c, *y;
    CK(cudaMalloc(&a, m * k * 4));
    CK(cudaMalloc(&b, n * k * 4));
    CK(cudaMalloc(&bi, n * 4));
    CK(cudaMalloc(&c, m * n * 4));
    CK(cudaMalloc(&y, m * n * 4));
    CK(cudaMemset(a, 0, m * k * 4));
    CK(cudaMemset(b, 0, n * k * 4));
    CK(cudaMemset(bi, 0, n * 4));
    Lt p1 = plan(h, m, n, k, CUBLASLT_EPILOGUE_BIAS);
    Lt p2 = plan(h, m, n, k, CUBLASLT_EPILOGUE_RELU_BIAS);
    float t1 = median_us([&] {
      run(p1, a, b, bi, c);
      relu<<<(m * n + 255) / 256, 256>>>(c, y, m * n);
    });
    float t0 = median_us([&] { run(p1, a, b, bi, c); });
    float t2 = median_us([&] { run(p2, a, b, bi, c); });
    printf("%ld x %d x %d: gemm+bias %.1f us, then relu kernel %.1f us in "
           "all; RELU_BIAS epilogue %.1f us\n",
           long(m), n, k, t0, t1, t2);
  }
  return 0;
}
