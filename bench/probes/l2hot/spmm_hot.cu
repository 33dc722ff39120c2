// Would an L2 kept for the hottest source rows pay on a large f32 SpMM?
// (issue 29's f32 SpMM >= 1.5x cuSPARSE on reddit-like). Reads gen.py's
// CSR; F = 128 f32 features; a warp per destination row, a float4 per lane.
// Variants (median ms of REPS after 3 warm-ups):
//   plain       the sources' rows read with __ldg, ids as given
//   sorted      the ids renumbered by out-degree (hottest first), __ldg
//   sorted+hint renumbered; rows of the H hottest read with an L2
//               evict_last policy, the others evict_first (createpolicy)
//   flag+hint   ids as given, an edge's hotness in its column index's top
//               bit (what a graph build could mark), the same hints
//   window      renumbered, an access-policy window (persisting) over the
//               H hottest rows, __ldg
//   cusparse    cusparseSpMM, CSR, default algorithm and CSR_ALG2
// Every variant's result is compared with plain's.
//   nvcc -O3 -arch=sm_90 spmm_hot.cu -lcusparse -o spmm_hot && ./spmm_hot DIR
#include <cuda_runtime.h>
#include <cusparse.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)
#define CS(x) do { cusparseStatus_t s_ = (x); if (s_ != CUSPARSE_STATUS_SUCCESS) { \
  printf("cuSPARSE %d at %d\n", int(s_), __LINE__); exit(1); } } while (0)

template <typename T> std::vector<T> readAll(const std::string &p, size_t n) {
  std::vector<T> v(n);
  FILE *f = fopen(p.c_str(), "rb");
  if (!f || fread(v.data(), sizeof(T), n, f) != n) { printf("read %s\n", p.c_str()); exit(1); }
  fclose(f);
  return v;
}

__device__ __forceinline__ float4 ldHint(const float4 *p, unsigned long long pol) {
  float4 v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
  return v;
}

// MODE 0: __ldg; 1: hot = id < hot; 2: hot = top bit of the column index.
template <int MODE>
__global__ void __launch_bounds__(256) spmm(const int *__restrict__ ptr, const int *__restrict__ col,
                                            const float *__restrict__ w, const float4 *__restrict__ x,
                                            float4 *__restrict__ y, int n, int hot) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (row >= n) return;
  unsigned long long last = 0, first = 0;
  if (MODE) {
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(last));
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(first));
  }
  int b = ptr[row], e = ptr[row + 1];
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int base = b; base < e; base += 32) {
    int k = base + lane;
    int c = k < e ? __ldg(col + k) : 0;
    float wv = k < e ? __ldg(w + k) : 0.f;
    int cnt = min(32, e - base);
#pragma unroll 4
    for (int j = 0; j < cnt; ++j) {
      int s = __shfl_sync(0xffffffffu, c, j);
      float ww = __shfl_sync(0xffffffffu, wv, j);
      float4 v;
      if (MODE == 0) {
        v = __ldg(x + size_t(s) * 32 + lane);
      } else if (MODE == 1) {
        v = ldHint(x + size_t(s) * 32 + lane, s < hot ? last : first);
      } else {
        bool h = s < 0;
        s &= 0x7fffffff;
        v = ldHint(x + size_t(s) * 32 + lane, h ? last : first);
      }
      acc.x += ww * v.x; acc.y += ww * v.y; acc.z += ww * v.z; acc.w += ww * v.w;
    }
  }
  y[size_t(row) * 32 + lane] = acc;
}

static int REPS = 10;

template <typename F> float timeIt(F f) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ts;
  for (int i = 0; i < REPS; ++i) {
    CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

int main(int argc, char **argv) {
  std::string dir = argv[1];
  if (argc > 2) REPS = atoi(argv[2]);
  int n; long long e;
  { FILE *f = fopen((dir + "/meta.txt").c_str(), "r"); if (fscanf(f, "%d %lld", &n, &e) != 2) return 1; fclose(f); }
  auto ptr = readAll<int>(dir + "/ptr.i32", n + 1);
  auto col = readAll<int>(dir + "/col.i32", e);
  auto w = readAll<float>(dir + "/w.f32", e);
  auto outdeg = readAll<int>(dir + "/outdeg.i32", n);
  const int F = 128;
  // Renumbering by out-degree, hottest first: perm[old] = new.
  std::vector<int> byDeg(n); std::iota(byDeg.begin(), byDeg.end(), 0);
  std::stable_sort(byDeg.begin(), byDeg.end(), [&](int a, int b) { return outdeg[a] > outdeg[b]; });
  std::vector<int> perm(n); for (int i = 0; i < n; ++i) perm[byDeg[i]] = i;
  std::vector<int> colSorted(e); for (long long i = 0; i < e; ++i) colSorted[i] = perm[col[i]];
  std::vector<float> x(size_t(n) * F), xs(size_t(n) * F);
  srand(7);
  for (auto &v : x) v = float(rand()) / RAND_MAX - 0.5f;
  for (int i = 0; i < n; ++i) std::copy(&x[size_t(i) * F], &x[size_t(i) * F] + F, &xs[size_t(perm[i]) * F]);
  // Gather share of the top rows (what a cache of H rows could serve).
  std::vector<long long> sortedDeg(n); for (int i = 0; i < n; ++i) sortedDeg[i] = outdeg[byDeg[i]];
  printf("nodes %d edges %lld; share of gathers from the hottest rows:", n, e);
  long long acc = 0; int marks[] = {8192, 16384, 32768, 49152, 65536, 98304};
  for (int i = 0, m = 0; i < n && m < 6; ++i) { acc += sortedDeg[i]; if (i + 1 == marks[m]) { printf(" %dK %.2f", marks[m] / 1024, double(acc) / e); ++m; } }
  printf("\n");

  int *dPtr, *dCol, *dColS, *dColF; float *dW, *dX, *dXs, *dY, *dRef;
  CK(cudaMalloc(&dPtr, (n + 1) * 4)); CK(cudaMalloc(&dCol, e * 4)); CK(cudaMalloc(&dColS, e * 4));
  CK(cudaMalloc(&dColF, e * 4)); CK(cudaMalloc(&dW, e * 4));
  CK(cudaMalloc(&dX, size_t(n) * F * 4)); CK(cudaMalloc(&dXs, size_t(n) * F * 4));
  CK(cudaMalloc(&dY, size_t(n) * F * 4)); CK(cudaMalloc(&dRef, size_t(n) * F * 4));
  CK(cudaMemcpy(dPtr, ptr.data(), (n + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dCol, col.data(), e * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dColS, colSorted.data(), e * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dW, w.data(), e * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dX, x.data(), size_t(n) * F * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dXs, xs.data(), size_t(n) * F * 4, cudaMemcpyHostToDevice));
  std::vector<float> ref(size_t(n) * F), got(size_t(n) * F);
  int blocks = int((size_t(n) * 32 + 255) / 256);
  auto compare = [&](const char *what) {
    CK(cudaMemcpy(got.data(), dY, size_t(n) * F * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(fabsf(got[i] - ref[i])) / (1e-3 + fabsf(ref[i])));
    if (worst > 1e-3) printf("  %s differs from plain: worst relative %.3g\n", what, worst);
  };
  float plain = timeIt([&] { spmm<0><<<blocks, 256>>>(dPtr, dCol, dW, (float4 *)dX, (float4 *)dY, n, 0); });
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(ref.data(), dY, size_t(n) * F * 4, cudaMemcpyDeviceToHost));
  printf("plain %.3f ms\n", plain);
  float sorted = timeIt([&] { spmm<0><<<blocks, 256>>>(dPtr, dColS, dW, (float4 *)dXs, (float4 *)dY, n, 0); });
  compare("sorted");
  printf("sorted %.3f ms\n", sorted);
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  printf("L2 %d bytes, persisting max %d bytes\n", prop.l2CacheSize, prop.persistingL2CacheMaxSize);
  for (int hot : marks) {
    if (hot > n) break;
    float a = timeIt([&] { spmm<1><<<blocks, 256>>>(dPtr, dColS, dW, (float4 *)dXs, (float4 *)dY, n, hot); });
    compare("sorted+hint");
    std::vector<int> cf(col);
    for (long long i = 0; i < e; ++i) if (perm[col[i]] < hot) cf[i] |= int(0x80000000u);
    CK(cudaMemcpy(dColF, cf.data(), e * 4, cudaMemcpyHostToDevice));
    float b = timeIt([&] { spmm<2><<<blocks, 256>>>(dPtr, dColF, dW, (float4 *)dX, (float4 *)dY, n, hot); });
    compare("flag+hint");
    // Access-policy window over the hot rows (renumbered), persisting.
    size_t bytes = std::min<size_t>(size_t(hot) * F * 4, prop.accessPolicyMaxWindowSize);
    CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, std::min<size_t>(bytes, prop.persistingL2CacheMaxSize)));
    cudaStreamAttrValue attr = {};
    attr.accessPolicyWindow.base_ptr = dXs; attr.accessPolicyWindow.num_bytes = bytes;
    attr.accessPolicyWindow.hitRatio = std::min(1.0f, float(prop.persistingL2CacheMaxSize) / float(bytes));
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CK(cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &attr));
    float c = timeIt([&] { spmm<0><<<blocks, 256>>>(dPtr, dColS, dW, (float4 *)dXs, (float4 *)dY, n, 0); });
    compare("window");
    attr.accessPolicyWindow.num_bytes = 0;
    CK(cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &attr));
    CK(cudaCtxResetPersistingL2Cache());
    CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    printf("hot %6d rows (%5.1f MB): sorted+hint %.3f  flag+hint %.3f  window %.3f ms\n", hot,
           hot * F * 4 / 1e6, a, b, c);
  }
  // cuSPARSE on the ids as given.
  cusparseHandle_t h; CS(cusparseCreate(&h));
  cusparseSpMatDescr_t A; cusparseDnMatDescr_t X, Y;
  CS(cusparseCreateCsr(&A, n, n, e, dPtr, dCol, dW, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CS(cusparseCreateDnMat(&X, n, F, F, dX, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CS(cusparseCreateDnMat(&Y, n, F, F, dY, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  float one = 1.f, zero = 0.f;
  for (auto alg : {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG2}) {
    size_t bytes = 0;
    CS(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                               &one, A, X, &zero, Y, CUDA_R_32F, alg, &bytes));
    void *buf = nullptr; if (bytes) CK(cudaMalloc(&buf, bytes));
    float t = timeIt([&] { CS(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                          &one, A, X, &zero, Y, CUDA_R_32F, alg, buf)); });
    compare("cusparse");
    printf("cusparse alg %d %.3f ms (plain / it: %.2fx)\n", int(alg), t, t / plain);
    if (buf) CK(cudaFree(buf));
  }
  return 0;
}
