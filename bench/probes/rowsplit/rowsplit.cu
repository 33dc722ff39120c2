// The weight gradient's row split (Library.cu's gemmRowSplit: Aᵀ B of f32
// matrices summed in double precision on the FP64 tensor cores, slice by
// slice, then the slices added in a fixed order): how many warp groups a
// block of atbSlices should run over each staged slab, how many warps the
// slice sum should spread the slices over, and how many slices, for the
// shapes gnnc's backward programs produce (GINE's 64 x 64 over 36,000
// nodes, its 4 x 64 edge projection over 76,000 edges, a 128 x 256 layer
// over 180,000 nodes, 64 x 64 over 233,000 and 1,000,000 rows). cuBLAS's
// SGEMM beside them. The kernels are copies of Library.cu's, templated on
// the groups (G) and the sum's warps (W); G = 1, W = 8 is the kernel as it
// was before session 53.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o rowsplit rowsplit.cu -lcublas
//   rowsplit            (one line of JSON per shape and variant)
//
// Each line: median ms of 30 runs after 5 warm-ups (CUDA events around each
// run), the largest relative difference from a double-precision sum on the
// host, and whether two runs gave the same bits.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__,                   \
                   cudaGetErrorString(e));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__device__ __forceinline__ void dmma16x8x8(const double (&a)[4],
                                           const double (&b)[2],
                                           double (&d)[4]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]),
                 "d"(b[1]));
}

constexpr int T = 64, R = 32;

template <int G>
__global__ void __launch_bounds__(128 * G)
    atbSlices(const float *__restrict__ a, const float *__restrict__ b,
              double *partials, int64_t m, int64_t n, int64_t k,
              int64_t rows) {
  constexpr int Threads = 128 * G;
  constexpr int kPer = R * T / Threads;
  constexpr int UM = T / 32, UN = T / 16;
  constexpr int Acc = UM * UN * 4;
  static_assert(R * T % Threads == 0 && (R / 8) % G == 0, "");
  constexpr int Slab = R * (T + 4);
  static_assert(2 * Slab >= (G - 1) * 4 * Acc * 32, "");
  __shared__ double smem[2 * Slab];
  auto sa = reinterpret_cast<double(*)[T + 4]>(smem);
  auto sb = reinterpret_cast<double(*)[T + 4]>(smem + Slab);
  int64_t i0 = int64_t(blockIdx.y) * T, j0 = int64_t(blockIdx.x) * T;
  int64_t r0 = int64_t(blockIdx.z) * rows;
  int64_t r1 = r0 + rows < k ? r0 + rows : k;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int group = warp / 4, quarter = warp % 4;
  int wi = (quarter / 2) * (T / 2), wj = (quarter % 2) * (T / 2);
  int g = lane / 4, t = lane % 4;
  double acc[UM][UN][4] = {};
  float pa[kPer], pb[kPer];
  auto load = [&](int64_t r) {
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      int e = threadIdx.x + Threads * p, q = e / T, col = e % T;
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
      int e = threadIdx.x + Threads * p, q = e / T, col = e % T;
      sa[q][col] = double(pa[p]);
      sb[q][col] = double(pb[p]);
    }
    __syncthreads();
    if (r + R < r1)
      load(r + R);
#pragma unroll
    for (int q = 8 * group; q < R; q += 8 * G) {
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
  if (G > 1) {
    if (group > 0) {
      double *park = smem + ((group - 1) * 4 + quarter) * Acc * 32 + lane;
#pragma unroll
      for (int u = 0; u < UM; ++u)
#pragma unroll
        for (int v = 0; v < UN; ++v)
#pragma unroll
          for (int h = 0; h < 4; ++h)
            park[((u * UN + v) * 4 + h) * 32] = acc[u][v][h];
    }
    __syncthreads();
    if (group > 0)
      return;
#pragma unroll
    for (int o = 1; o < G; ++o) {
      const double *park = smem + ((o - 1) * 4 + quarter) * Acc * 32 + lane;
#pragma unroll
      for (int u = 0; u < UM; ++u)
#pragma unroll
        for (int v = 0; v < UN; ++v)
#pragma unroll
          for (int h = 0; h < 4; ++h)
            acc[u][v][h] += park[((u * UN + v) * 4 + h) * 32];
    }
  }
  double *out = partials + int64_t(blockIdx.z) * m * n;
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
}

template <int W>
__global__ void __launch_bounds__(32 * W)
    sumSlices(const double *partials, int64_t chunks, int64_t mn, double alpha,
              double beta, float *c) {
  __shared__ double sums[W][32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int64_t idx = int64_t(blockIdx.x) * 32 + lane;
  int64_t per = (chunks + W - 1) / W;
  int64_t z0 = warp * per, z1 = z0 + per < chunks ? z0 + per : chunks;
  double s = 0;
  if (idx < mn)
    for (int64_t z = z0; z < z1; ++z)
      s += partials[z * mn + idx];
  sums[warp][lane] = s;
  __syncthreads();
  if (warp != 0 || idx >= mn)
    return;
  double t = 0;
#pragma unroll
  for (int w = 0; w < W; ++w)
    t += sums[w][lane];
  t *= alpha;
  if (beta != 0)
    t += beta * double(c[idx]);
  c[idx] = float(t);
}

template <int G, int W>
static void rowSplit(int64_t m, int64_t n, int64_t k, int64_t chunks,
                     const float *a, const float *b, float *c, double *p) {
  int64_t rows = (k + chunks - 1) / chunks;
  dim3 grid(unsigned((n + T - 1) / T), unsigned((m + T - 1) / T),
            unsigned(chunks));
  atbSlices<G><<<grid, 128 * G>>>(a, b, p, m, n, k, rows);
  sumSlices<W><<<unsigned((m * n + 31) / 32), 32 * W>>>(p, chunks, m * n, 1.0,
                                                       0.0, c);
}

int main() {
  struct Shape {
    int64_t k, m, n;
  };
  const Shape shapes[] = {{36000, 64, 64},   {76008, 4, 64},
                          {180000, 128, 256}, {232965, 64, 64},
                          {1000000, 64, 64},  {19717, 64, 64},
                          {2400000, 64, 64}};
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS)
    return 1;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (const Shape &s : shapes) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> a(s.k * s.m), b(s.k * s.n);
    for (float &x : a) x = u(rng);
    for (float &x : b) x = u(rng);
    std::vector<double> ref(s.m * s.n, 0.0);
    for (int64_t r = 0; r < s.k; ++r)
      for (int64_t i = 0; i < s.m; ++i) {
        double x = a[r * s.m + i];
        for (int64_t j = 0; j < s.n; ++j)
          ref[i * s.n + j] += x * double(b[r * s.n + j]);
      }
    int64_t tiles = ((s.m + 63) / 64) * ((s.n + 63) / 64);
    int64_t formula = std::max<int64_t>(
        1, std::min<int64_t>((s.k + 255) / 256,
                             std::max<int64_t>(1, 256 / tiles)));
    float *da, *db, *dc;
    double *dp;
    int64_t maxChunks = 4 * formula;
    CK(cudaMalloc(&da, a.size() * 4));
    CK(cudaMalloc(&db, b.size() * 4));
    CK(cudaMalloc(&dc, s.m * s.n * 4));
    CK(cudaMalloc(&dp, maxChunks * s.m * s.n * 8));
    CK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    auto measure = [&](const char *name, int64_t chunks, auto run) {
      for (int i = 0; i < 5; ++i)
        run();
      CK(cudaDeviceSynchronize());
      std::vector<float> ms;
      for (int i = 0; i < 30; ++i) {
        CK(cudaEventRecord(e0));
        run();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      std::vector<float> c1(s.m * s.n), c2(s.m * s.n);
      CK(cudaMemset(dc, 0, c1.size() * 4));
      run();
      CK(cudaMemcpy(c1.data(), dc, c1.size() * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemset(dc, 0, c1.size() * 4));
      run();
      CK(cudaMemcpy(c2.data(), dc, c2.size() * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t i = 0; i < c1.size(); ++i)
        worst = std::max(worst, std::fabs(c1[i] - ref[i]) /
                                    std::max(1.0, std::fabs(ref[i])));
      bool same = std::memcmp(c1.data(), c2.data(), c1.size() * 4) == 0;
      std::printf("{\"k\": %lld, \"m\": %lld, \"n\": %lld, \"variant\": "
                  "\"%s\", \"chunks\": %lld, \"ms\": %.4f, \"worst_rel\": "
                  "%.3g, \"same_bits\": %s}\n",
                  (long long)s.k, (long long)s.m, (long long)s.n, name,
                  (long long)chunks, ms[ms.size() / 2], worst,
                  same ? "true" : "false");
      std::fflush(stdout);
    };
    for (int64_t chunks : {formula / 2, formula, 2 * formula, 4 * formula}) {
      if (chunks < 1 || chunks > 65535)
        continue;
      measure("G1 W8", chunks, [&] {
        rowSplit<1, 8>(s.m, s.n, s.k, chunks, da, db, dc, dp);
      });
      measure("G1 W32", chunks, [&] {
        rowSplit<1, 32>(s.m, s.n, s.k, chunks, da, db, dc, dp);
      });
      measure("G2 W8", chunks, [&] {
        rowSplit<2, 8>(s.m, s.n, s.k, chunks, da, db, dc, dp);
      });
      measure("G2 W32", chunks, [&] {
        rowSplit<2, 32>(s.m, s.n, s.k, chunks, da, db, dc, dp);
      });
    }
    measure("cuBLAS SGEMM", 0, [&] {
      // Row-major C (m x n) = Aᵀ B is column-major Cᵀ = Bᵀ A: B is n x k
      // column-major (ld n), A is m x k column-major (ld m), transposed.
      float one = 1, zero = 0;
      cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, int(s.n), int(s.m), int(s.k),
                  &one, db, int(s.n), da, int(s.m), &zero, dc, int(s.n));
    });
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
    CK(cudaFree(dp));
  }
  return 0;
}
