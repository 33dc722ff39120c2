// Would a coalesced read of a row's column indices (one load for 32 edges,
// broadcast by shuffles) make the low-degree SpMM faster? The scoreboard's
// weighted spmm-sum at 128 features, f32 and bf16, on graphs given as CSR
// files (rowptr.i32, col.i32 written by graphs_to_csr.py): today's emitted
// kernel (a warp per row, the index of each edge loaded beside its gather)
// against variants, and cuSPARSE in the same process.
//
//   nvcc -O3 -arch=sm_90 -o spmm_crc spmm_crc.cu -lcusparse
//   spmm_crc DIR NAME...     (DIR/NAME.rowptr.i32, DIR/NAME.col.i32)
//
// One line of JSON per graph, type and variant: median ms of 20 runs after
// 5 warm-ups, and the largest difference from variant "emitted". Only rows
// of at most kLight edges are computed (cuSPARSE computes all rows).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)
#define CS(x)                                                                  \
  do {                                                                         \
    cusparseStatus_t e = (x);                                                  \
    if (e != CUSPARSE_STATUS_SUCCESS) {                                        \
      fprintf(stderr, "%s:%d cusparse %d\n", __FILE__, __LINE__, (int)e);      \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

constexpr int F = 128;
// Rows of more edges go to the split kernels (not timed here): the
// emitted kernel's light path on these graphs.
constexpr int kLight = 32;

// 16 bytes of T widened to floats.
template <typename T> struct Vec;
template <> struct Vec<float> {
  static constexpr int N = 4;
  __device__ static void load(const float *p, float *o) {
    float4 v = __ldg(reinterpret_cast<const float4 *>(p));
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
  }
  __device__ static void store(float *p, const float *o) {
    *reinterpret_cast<float4 *>(p) = make_float4(o[0], o[1], o[2], o[3]);
  }
  __device__ static float scalar(const float *p) { return __ldg(p); }
};
template <> struct Vec<__nv_bfloat16> {
  static constexpr int N = 8;
  __device__ static void load(const __nv_bfloat16 *p, float *o) {
    uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
    unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      o[2 * i] = __uint_as_float(w[i] << 16);
      o[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
  __device__ static void store(__nv_bfloat16 *p, const float *o) {
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __nv_bfloat162 h = __floats2bfloat162_rn(o[2 * i], o[2 * i + 1]);
      w[i] = *reinterpret_cast<unsigned *>(&h);
    }
    *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  }
  __device__ static float scalar(const __nv_bfloat16 *p) {
    return __bfloat162float(__ldg(p));
  }
};

// Today's emitted kernel (gnn-run --dump-cuda, rows of at most 32 edges; the
// longer ones are split there): a warp per row (TEAM = 32), G = TEAM / (F / N)
// edge groups, each edge's index loaded beside its gather, UNROLL 4. TEAM = L
// takes one edge group per row and 32 / L rows per warp.
template <typename T, int TEAM = 32, int UNROLL = 4>
__global__ void __launch_bounds__(256)
    emitted(int n, const int *__restrict__ rp, const int *__restrict__ col,
            const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y) {
  constexpr int N = Vec<T>::N, L = F / N, G = TEAM / L;
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long row = t / TEAM;
  int lane = t % TEAM;
  if (row >= n)
    return;
  int g = lane / L, sub = lane % L;
  int b = __ldg(rp + row), e = __ldg(rp + row + 1);
  if (e - b > kLight)
    return; // the heavy rows are split into chunks by another kernel
  float acc[N] = {};
#pragma unroll UNROLL
  for (int p = b + g; p < e; p += G) {
    float v[N];
    Vec<T>::load(x + (long long)__ldg(col + p) * F + sub * N, v);
    float wv = Vec<T>::scalar(w + p);
#pragma unroll
    for (int i = 0; i < N; ++i)
      acc[i] += wv * v[i];
  }
#pragma unroll
  for (int o = L; o < TEAM; o <<= 1)
#pragma unroll
    for (int i = 0; i < N; ++i)
      acc[i] += __shfl_xor_sync(~0u, acc[i], o);
  if (g == 0)
    Vec<T>::store(y + row * F + sub * N, acc);
}

// A team of TEAM lanes per row (TEAM = 32: a warp; TEAM = L: one edge group
// per row, 32 / L rows per warp). The team reads 32 (or TEAM) column
// indices and weights at once, coalesced, and hands each edge group its
// index by a shuffle, so the gathers of a chunk depend on one load only.
// UNROLL edges per group in flight.
template <typename T, int TEAM, int UNROLL>
__global__ void __launch_bounds__(256)
    crc(int n, const int *__restrict__ rp, const int *__restrict__ col,
        const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y) {
  constexpr int N = Vec<T>::N, L = F / N, G = TEAM / L;
  static_assert(TEAM % L == 0 && G >= 1, "team");
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long row = t / TEAM;
  int lane = t % TEAM;
  int warpLane = threadIdx.x % 32;
  unsigned mask = TEAM == 32 ? ~0u : (((1u << TEAM) - 1) << (warpLane / TEAM * TEAM));
  if (row >= n)
    return; // whole teams leave together (n rows, TEAM | 32)
  int g = lane / L, sub = lane % L;
  int b = __ldg(rp + row), e = __ldg(rp + row + 1);
  if (e - b > kLight)
    return; // the heavy rows are split into chunks by another kernel
  float acc[N] = {};
  for (int base = b; base < e; base += TEAM) {
    int cnt = min(TEAM, e - base);
    int myIdx = lane < cnt ? __ldg(col + base + lane) : 0;
    float myW = lane < cnt ? Vec<T>::scalar(w + base + lane) : 0.f;
#pragma unroll UNROLL
    for (int j = g; j - g < cnt; j += G) {
      int jj = j < cnt ? j : 0;
      int nb = __shfl_sync(mask, myIdx, jj, TEAM);
      float wv = __shfl_sync(mask, myW, jj, TEAM);
      if (j < cnt) {
        float v[N];
        Vec<T>::load(x + (long long)nb * F + sub * N, v);
#pragma unroll
        for (int i = 0; i < N; ++i)
          acc[i] += wv * v[i];
      }
    }
  }
#pragma unroll
  for (int o = L; o < TEAM; o <<= 1)
#pragma unroll
    for (int i = 0; i < N; ++i)
      acc[i] += __shfl_xor_sync(mask, acc[i], o, TEAM);
  if (g == 0)
    Vec<T>::store(y + row * F + sub * N, acc);
}

// As crc, but the chunk's gathers are issued in fixed batches of B (all
// loads first, then the multiply-adds) so B loads per lane are in flight
// whatever the compiler does with the loop.
template <typename T, int TEAM, int B>
__global__ void __launch_bounds__(256)
    batched(int n, const int *__restrict__ rp, const int *__restrict__ col,
            const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y) {
  constexpr int N = Vec<T>::N, L = F / N, G = TEAM / L;
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long row = t / TEAM;
  int lane = t % TEAM;
  int warpLane = threadIdx.x % 32;
  unsigned mask = TEAM == 32 ? ~0u : (((1u << TEAM) - 1) << (warpLane / TEAM * TEAM));
  if (row >= n)
    return;
  int g = lane / L, sub = lane % L;
  int b = __ldg(rp + row), e = __ldg(rp + row + 1);
  if (e - b > kLight)
    return; // the heavy rows are split into chunks by another kernel
  float acc[N] = {};
  for (int base = b; base < e; base += TEAM) {
    int cnt = min(TEAM, e - base);
    int myIdx = lane < cnt ? __ldg(col + base + lane) : 0;
    float myW = lane < cnt ? Vec<T>::scalar(w + base + lane) : 0.f;
    for (int j0 = 0; j0 < cnt; j0 += B * G) {
      float v[B][N];
      float wv[B];
#pragma unroll
      for (int k = 0; k < B; ++k) {
        int j = j0 + k * G + g;
        int jj = j < cnt ? j : 0;
        int nb = __shfl_sync(mask, myIdx, jj, TEAM);
        wv[k] = __shfl_sync(mask, myW, jj, TEAM);
        if (j < cnt)
          Vec<T>::load(x + (long long)nb * F + sub * N, v[k]);
        else {
          wv[k] = 0.f;
#pragma unroll
          for (int i = 0; i < N; ++i)
            v[k][i] = 0.f;
        }
      }
#pragma unroll
      for (int k = 0; k < B; ++k)
#pragma unroll
        for (int i = 0; i < N; ++i)
          acc[i] += wv[k] * v[k][i];
    }
  }
#pragma unroll
  for (int o = L; o < TEAM; o <<= 1)
#pragma unroll
    for (int i = 0; i < N; ++i)
      acc[i] += __shfl_xor_sync(mask, acc[i], o, TEAM);
  if (g == 0)
    Vec<T>::store(y + row * F + sub * N, acc);
}

template <typename T>
using Kernel = void (*)(int, const int *, const int *, const T *, const T *, T *);

static std::vector<int> readInts(const std::string &path) {
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path.c_str());
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  std::vector<int> v(bytes / 4);
  if (fread(v.data(), 4, v.size(), f) != v.size())
    exit(1);
  fclose(f);
  return v;
}

template <typename T> static T fromFloat(float f);
template <> float fromFloat<float>(float f) { return f; }
template <> __nv_bfloat16 fromFloat<__nv_bfloat16>(float f) { return __float2bfloat16(f); }
template <typename T> static float toFloat(T v);
template <> float toFloat<float>(float v) { return v; }
template <> float toFloat<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Launch>
static float timeIt(Launch launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i)
    launch();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float m;
    CK(cudaEventElapsedTime(&m, a, b));
    ms.push_back(m);
  }
  CK(cudaGetLastError());
  return median(ms);
}

template <typename T>
static void run(const char *graph, const char *type, const std::vector<int> &rp,
                const std::vector<int> &col, cusparseHandle_t sp) {
  int n = rp.size() - 1;
  long long m = col.size();
  std::vector<T> hx((size_t)n * F), hw(m);
  unsigned s = 12345;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return (s >> 8) * (1.f / 16777216.f) - 0.5f; };
  for (auto &v : hx) v = fromFloat<T>(rnd());
  for (auto &v : hw) v = fromFloat<T>(rnd());
  int *drp, *dcol;
  T *dx, *dw, *dy;
  CK(cudaMalloc(&drp, rp.size() * 4));
  CK(cudaMalloc(&dcol, std::max<long long>(m, 1) * 4));
  CK(cudaMalloc(&dx, hx.size() * sizeof(T)));
  CK(cudaMalloc(&dw, std::max<long long>(m, 1) * sizeof(T)));
  CK(cudaMalloc(&dy, hx.size() * sizeof(T)));
  CK(cudaMemcpy(drp, rp.data(), rp.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, col.data(), m * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, hx.data(), hx.size() * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, hw.data(), m * sizeof(T), cudaMemcpyHostToDevice));

  int maxDeg = 0;
  for (int i = 0; i < n; ++i)
    maxDeg = std::max(maxDeg, rp[i + 1] - rp[i]);

  std::vector<T> ref(hx.size()), got(hx.size());
  auto launchRows = [&](Kernel<T> k, int team) {
    long long threads = (long long)n * team;
    k<<<(unsigned)((threads + 255) / 256), 256>>>(n, drp, dcol, dx, dw, dy);
  };
  struct V { const char *name; Kernel<T> k; int team; };
  constexpr int L = F / Vec<T>::N;
  std::vector<V> vs = {
      {"emitted", emitted<T>, 32},
      {"emitted_u2", emitted<T, 32, 2>, 32},
      {"emitted_u8", emitted<T, 32, 8>, 32},
      {"crc32_u4", crc<T, 32, 4>, 32},
      {"crc32_u8", crc<T, 32, 8>, 32},
      {"batch32_b2", batched<T, 32, 2>, 32},
      {"batch32_b4", batched<T, 32, 4>, 32},
      {"batch32_b8", batched<T, 32, 8>, 32},
  };
  if (L < 32) {
    vs.push_back({"emittedL_u4", emitted<T, L, 4>, L});
    vs.push_back({"emittedL_u8", emitted<T, L, 8>, L});
    vs.push_back({"crcL_u4", crc<T, L, 4>, L});
    vs.push_back({"crcL_u8", crc<T, L, 8>, L});
    vs.push_back({"batchL_b2", batched<T, L, 2>, L});
    vs.push_back({"batchL_b4", batched<T, L, 4>, L});
  }
  for (size_t i = 0; i < vs.size(); ++i) {
    CK(cudaMemset(dy, 0, hx.size() * sizeof(T)));
    launchRows(vs[i].k, vs[i].team);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), dy, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    if (i == 0)
      ref = got;
    float diff = 0;
    for (size_t j = 0; j < got.size(); ++j)
      diff = std::max(diff, std::fabs(toFloat(got[j]) - toFloat(ref[j])));
    float ms = timeIt([&] { launchRows(vs[i].k, vs[i].team); });
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, vs[i].k));
    printf("{\"graph\": \"%s\", \"type\": \"%s\", \"variant\": \"%s\", \"ms\": %.4f, "
           "\"max_diff\": %.3g, \"nodes\": %d, \"edges\": %lld, \"max_degree\": %d, \"regs\": %d}\n",
           graph, type, vs[i].name, ms, diff, n, m, maxDeg, fa.numRegs);
    fflush(stdout);
  }

  // cuSPARSE, the same product (CSR rows = destinations).
  cudaDataType dt = sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_16BF;
  cusparseSpMatDescr_t A;
  cusparseDnMatDescr_t X, Y;
  CS(cusparseCreateCsr(&A, n, n, m, drp, dcol, dw, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, dt));
  CS(cusparseCreateDnMat(&X, n, F, F, dx, dt, CUSPARSE_ORDER_ROW));
  CS(cusparseCreateDnMat(&Y, n, F, F, dy, dt, CUSPARSE_ORDER_ROW));
  float one = 1, zero = 0;
  size_t ws = 0;
  CS(cusparseSpMM_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                             &one, A, X, &zero, Y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &ws));
  void *dws = nullptr;
  CK(cudaMalloc(&dws, std::max<size_t>(ws, 1)));
  auto sp1 = [&] {
    CS(cusparseSpMM(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A,
                    X, &zero, Y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, dws));
  };
  sp1();
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(got.data(), dy, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  float diff = 0;
  for (size_t j = 0; j < got.size(); ++j)
    diff = std::max(diff, std::fabs(toFloat(got[j]) - toFloat(ref[j])));
  float ms = timeIt(sp1);
  printf("{\"graph\": \"%s\", \"type\": \"%s\", \"variant\": \"cusparse\", \"ms\": %.4f, "
         "\"max_diff\": %.3g, \"nodes\": %d, \"edges\": %lld, \"max_degree\": %d}\n",
         graph, type, ms, diff, n, m, maxDeg);
  fflush(stdout);
  cusparseDestroySpMat(A);
  cusparseDestroyDnMat(X);
  cusparseDestroyDnMat(Y);
  cudaFree(dws);
  cudaFree(drp);
  cudaFree(dcol);
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DIR NAME...\n", argv[0]);
    return 2;
  }
  cusparseHandle_t sp;
  CS(cusparseCreate(&sp));
  for (int i = 2; i < argc; ++i) {
    std::string base = std::string(argv[1]) + "/" + argv[i];
    std::vector<int> rp = readInts(base + ".rowptr.i32"), col = readInts(base + ".col.i32");
    run<float>(argv[i], "f32", rp, col, sp);
    run<__nv_bfloat16>(argv[i], "bf16", rp, col, sp);
  }
  cusparseDestroy(sp);
  return 0;
}
