// A probe (session 73): the small GEMMs of a GINE layer on QM9 batches
// (35,970 rows x 64 x 64: the forward's Linear with its bias, gemmBias;
// the backward's dX = dY W, gemm's cublasSgemm) took 12.9-13.9 us each on
// an H100 in GINE's step, where moving their 18 MB takes about 6. Times
// cublasSgemm and every algorithm cuBLASLt's heuristic offers for the same
// row-major product (with and without the bias epilogue, workspace 0 as
// the library asks and 4 MiB), median of 50 runs, CUDA events; checks each
// against a double product (relative 1e-4). Run in session 74 (an H100,
// bench/results/checks-s74/call2-out/lt.txt): no algorithm beats the
// heuristic's first by more than a few percent for 35,970 x 64 x 64.
//   nvcc -O3 -arch=sm_90 lt_algos.cu -lcublasLt -lcublas -o lt && ./lt
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
      return 1;                                                                \
    }                                                                          \
  } while (0)

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

int main() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("device %s\n", prop.name);
  for (int64_t m : {35970, 8984, 300000}) {
    const int64_t n = 64, k = 64;
    std::vector<float> ha(m * k), hw(n * k), hbias(n);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto &v : ha) v = d(rng);
    for (auto &v : hw) v = d(rng);
    for (auto &v : hbias) v = d(rng);
    float *a, *w, *bias, *c;
    void *ws;
    CK(cudaMalloc(&a, m * k * 4));
    CK(cudaMalloc(&w, n * k * 4));
    CK(cudaMalloc(&bias, n * 4));
    CK(cudaMalloc(&c, m * n * 4));
    CK(cudaMalloc(&ws, 4 << 20));
    CK(cudaMemcpy(a, ha.data(), m * k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), n * k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bias, hbias.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<float> hc(m * n);
    // transB: C = A Wᵀ (+ bias), the forward's Linear; else C = A W (dX).
    for (int transB = 0; transB < 2; ++transB) {
      auto check = [&](bool withBias) {
        CK(cudaMemcpy(hc.data(), c, m * n * 4, cudaMemcpyDeviceToHost));
        double worst = 0;
        for (int64_t i = 0; i < m; i += 97)
          for (int64_t j = 0; j < n; ++j) {
            double s = withBias ? hbias[j] : 0;
            for (int64_t q = 0; q < k; ++q)
              s += double(ha[i * k + q]) * (transB ? hw[j * k + q] : hw[q * n + j]);
            worst = std::max(worst, std::fabs(hc[i * n + j] - s) / (1 + std::fabs(s)));
          }
        return worst < 1e-4 ? 0 : 1;
      };
      cublasHandle_t h;
      CK(cublasCreate(&h));
      float one = 1, zero = 0;
      cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
      auto sg = [&]() {
        cublasSgemm(h, opB, CUBLAS_OP_N, int(n), int(m), int(k), &one, w,
                    transB ? int(k) : int(n), a, int(k), &zero, c, int(n));
      };
      float tsg = median(sg);
      sg();
      cudaDeviceSynchronize();
      printf("| %lld x %lld x %lld | %s | cublasSgemm | %.1f | %s |\n", (long long)m,
             (long long)n, (long long)k, transB ? "A Wt" : "A W", tsg, check(false) ? "WRONG" : "ok");
      cublasLtHandle_t lt;
      CK(cublasLtCreate(&lt));
      for (int withBias = 0; withBias < 2; ++withBias)
        for (size_t wsBytes : {size_t(0), size_t(4 << 20)}) {
          cublasLtMatmulDesc_t op;
          CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
          cublasOperation_t opA = CUBLAS_OP_N;
          CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opB, sizeof(opB)));
          CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opA, sizeof(opA)));
          if (withBias) {
            cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
            CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
            CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
          }
          cublasLtMatrixLayout_t lb, la, lc;
          CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, transB ? k : n, transB ? n : k, transB ? k : n));
          CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, k, m, k));
          CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, n));
          cublasLtMatmulPreference_t pref;
          CK(cublasLtMatmulPreferenceCreate(&pref));
          CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof(wsBytes)));
          cublasLtMatmulHeuristicResult_t res[32];
          int found = 0;
          CK(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, pref, 32, res, &found));
          for (int i = 0; i < found; ++i) {
            auto f = [&]() {
              cublasLtMatmul(lt, op, &one, w, lb, a, la, &zero, c, lc, c, lc, &res[i].algo,
                             ws, wsBytes, 0);
            };
            f();
            if (cudaDeviceSynchronize() != cudaSuccess) { printf("algo %d failed\n", i); continue; }
            int bad = check(withBias);
            int tile = -1, splitk = -1;
            size_t sz;
            cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &sz);
            cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof(splitk), &sz);
            printf("| %lld x %lld x %lld | %s%s, ws %zu | Lt #%d (tile %d, split-k %d) | %.1f | %s |\n",
                   (long long)m, (long long)n, (long long)k, transB ? "A Wt" : "A W",
                   withBias ? " + bias" : "", wsBytes, i, tile, splitk, median(f),
                   bad ? "WRONG" : "ok");
          }
          cublasLtMatmulPreferenceDestroy(pref);
          cublasLtMatrixLayoutDestroy(lb);
          cublasLtMatrixLayoutDestroy(la);
          cublasLtMatrixLayoutDestroy(lc);
          cublasLtMatmulDescDestroy(op);
        }
      cublasLtDestroy(lt);
      cublasDestroy(h);
    }
    cudaFree(a); cudaFree(w); cudaFree(bias); cudaFree(c); cudaFree(ws);
  }
  return 0;
}
