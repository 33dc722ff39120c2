// A probe (session 73): the weight gradient C = Aᵀ B where one side of C
// is narrow (GINE's edge projection: 76,008 edges x 64 channels x
// edge_dim 4), the library's atbSlices (64 x 64 tiles of FP64 mma's, as of
// session 72) against thread-per-column kernels summing in double with G
// groups of 64 threads over the slice's rows and U rows unrolled; and
// atbSlices on GINE's 64 x 64 dW at more slices than the compiler's.
// Every variant checked against a double product (relative 1e-6) and run
// to run (bits). Median of 30 runs, both kernels of each (slices + sum).
//   nvcc -O3 -arch=sm_90 narrow.cu -o narrow && ./narrow
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));         \
      exit(1);                                                                 \
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

constexpr int kT = 64, kR = 32;

// The library's kernel as it is (one group of 4 warps).
__global__ void __launch_bounds__(128)
    atbOld(const float *__restrict__ a, const float *__restrict__ b,
           double *partials, int64_t m, int64_t n, int64_t k, int64_t rows) {
  constexpr int T = kT, R = kR;
  constexpr int kPer = R * T / 128;
  __shared__ double sa[R][T + 4], sb[R][T + 4];
  int64_t i0 = int64_t(blockIdx.y) * T, j0 = int64_t(blockIdx.x) * T;
  int64_t r0 = int64_t(blockIdx.z) * rows;
  int64_t r1 = r0 + rows < k ? r0 + rows : k;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int wi = (warp / 2) * (T / 2), wj = (warp % 2) * (T / 2);
  int g = lane / 4, t = lane % 4;
  constexpr int UM = T / 32, UN = T / 16;
  double acc[UM][UN][4] = {};
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
    }
    __syncthreads();
    if (r + R < r1)
      load(r + R);
#pragma unroll
    for (int q = 0; q < R; q += 8) {
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

constexpr int kSumWarps = 8;
__global__ void __launch_bounds__(32 * kSumWarps)
    sumSlices(const double *partials, int64_t chunks, int64_t mn, double alpha,
              double beta, float *c) {
  __shared__ double sums[kSumWarps][32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int64_t idx = int64_t(blockIdx.x) * 32 + lane;
  int64_t per = (chunks + kSumWarps - 1) / kSumWarps;
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
  for (int w = 0; w < kSumWarps; ++w)
    t += sums[w][lane];
  t *= alpha;
  if (beta != 0)
    t += beta * double(c[idx]);
  c[idx] = float(t);
}

int64_t chunksFor(int64_t k, int64_t m, int64_t n) {
  // ProgramLowering's: slices of at least 256 rows, about 256 blocks.
  int64_t tiles = (m + 63) / 64 * ((n + 63) / 64);
  return std::max<int64_t>(
      std::min<int64_t>((k + 255) / 256, std::max<int64_t>(1, 256 / tiles)), 1);
}


template <int N, bool NarrowA, int G, int U>
__global__ void __launch_bounds__(64 * G)
    atbNarrow(const float *__restrict__ a, const float *__restrict__ b,
              double *partials, int64_t m, int64_t n, int64_t k,
              int64_t rows) {
  __shared__ double sums[G - 1][N][64];
  int lane = threadIdx.x % 64, group = threadIdx.x / 64;
  int64_t w = int64_t(blockIdx.x) * 64 + lane;
  const int64_t wide = NarrowA ? n : m, narrow = NarrowA ? m : n;
  const float *__restrict__ wideOp = NarrowA ? b : a;
  const float *__restrict__ narrowOp = NarrowA ? a : b;
  int64_t r0 = int64_t(blockIdx.z) * rows;
  int64_t r1 = r0 + rows < k ? r0 + rows : k;
  double acc[N] = {};
  if (w < wide) {
    int64_t r = r0 + group;
    for (; r + (U - 1) * G < r1; r += U * G) {
      float v[U], x[U][N];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        v[u] = __ldg(wideOp + (r + u * G) * wide + w);
#pragma unroll
        for (int q = 0; q < N; ++q)
          x[u][q] = q < narrow ? __ldg(narrowOp + (r + u * G) * narrow + q) : 0.f;
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int q = 0; q < N; ++q)
          acc[q] += double(x[u][q]) * double(v[u]);
    }
    for (; r < r1; r += G) {
      double v = double(wideOp[r * wide + w]);
#pragma unroll
      for (int q = 0; q < N; ++q)
        if (q < narrow)
          acc[q] += double(narrowOp[r * narrow + q]) * v;
    }
  }
  if (group > 0)
#pragma unroll
    for (int q = 0; q < N; ++q)
      sums[group - 1][q][lane] = acc[q];
  __syncthreads();
  if (group > 0 || w >= wide)
    return;
  double *out = partials + int64_t(blockIdx.z) * m * n;
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
}

template <int G, int U>
void launchNarrow(const float *a, const float *b, double *p, int64_t m,
                  int64_t n, int64_t k, int64_t chunks) {
  int64_t rows = (k + chunks - 1) / chunks;
  bool na = m <= n;
  int64_t wide = na ? n : m;
  dim3 grid(unsigned((wide + 63) / 64), 1, unsigned(chunks));
  if (na)
    atbNarrow<4, true, G, U><<<grid, 64 * G>>>(a, b, p, m, n, k, rows);
  else
    atbNarrow<4, false, G, U><<<grid, 64 * G>>>(a, b, p, m, n, k, rows);
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  struct Shape { int64_t k, m, n; const char *what; };
  Shape shapes[] = {{76008, 64, 4, "GINE dW_edge (64 x 4)"},
                    {76008, 4, 64, "GINE dW_edge transposed (4 x 64)"},
                    {35970, 64, 4, "36K x 64 x 4"},
                    {2000000, 64, 4, "2M x 64 x 4"},
                    {35970, 64, 64, "GINE dW (64 x 64)"}};
  printf("| shape | variant | chunks | us | worst rel err | repeat equal |\n| --- | --- | ---: | ---: | ---: | --- |\n");
  for (const Shape &sh : shapes) {
    int64_t k = sh.k, m = sh.m, n = sh.n, base = chunksFor(k, m, n);
    std::vector<float> ha(k * m), hb(k * n);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-0.5f, 0.5f);
    for (auto &v : ha) v = d(rng);
    for (auto &v : hb) v = d(rng);
    std::vector<double> want(m * n, 0.0);
    for (int64_t r = 0; r < k; ++r)
      for (int64_t i = 0; i < m; ++i) {
        double x = ha[r * m + i];
        for (int64_t j = 0; j < n; ++j)
          want[i * n + j] += x * hb[r * n + j];
      }
    float *a, *b, *c;
    double *p;
    CK(cudaMalloc(&a, k * m * 4));
    CK(cudaMalloc(&b, k * n * 4));
    CK(cudaMalloc(&c, m * n * 4));
    CK(cudaMalloc(&p, 8 * base * m * n * 8));
    CK(cudaMemcpy(a, ha.data(), k * m * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), k * n * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    struct V { const char *name; int id; int64_t chunks; };
    std::vector<V> vs;
    for (int64_t mult : {1, 2, 4})
      vs.push_back({"atbSlices", 0, base * mult});
    if (std::min(m, n) <= 4)
      for (int64_t mult : {1, 2})
        for (int id : {1, 2, 3, 4, 5, 6})
          vs.push_back({id == 1 ? "narrow G4 U1" : id == 2 ? "narrow G4 U4" :
                        id == 3 ? "narrow G8 U4" : id == 4 ? "narrow G16 U4" :
                        id == 5 ? "narrow G16 U2" : "narrow G8 U8", id, base * mult});
    for (const V &v : vs) {
      auto go = [&]() {
        int64_t ch = v.chunks;
        switch (v.id) {
        case 0: {
          int64_t rows = (k + ch - 1) / ch;
          dim3 grid(unsigned((n + kT - 1) / kT), unsigned((m + kT - 1) / kT), unsigned(ch));
          atbOld<<<grid, 128>>>(a, b, p, m, n, k, rows);
          break;
        }
        case 1: launchNarrow<4, 1>(a, b, p, m, n, k, ch); break;
        case 2: launchNarrow<4, 4>(a, b, p, m, n, k, ch); break;
        case 3: launchNarrow<8, 4>(a, b, p, m, n, k, ch); break;
        case 4: launchNarrow<16, 4>(a, b, p, m, n, k, ch); break;
        case 5: launchNarrow<16, 2>(a, b, p, m, n, k, ch); break;
        case 6: launchNarrow<8, 8>(a, b, p, m, n, k, ch); break;
        }
        int64_t mn = m * n;
        sumSlices<<<unsigned((mn + 31) / 32), 32 * kSumWarps>>>(p, ch, mn, 1.0, 0.0, c);
      };
      std::vector<float> first(m * n), hc(m * n);
      bool equal = true;
      for (int rep = 0; rep < 2; ++rep) {
        go();
        CK(cudaGetLastError());
        CK(cudaMemcpy(hc.data(), c, m * n * 4, cudaMemcpyDeviceToHost));
        if (rep == 0) first = hc; else if (first != hc) equal = false;
      }
      double worst = 0;
      for (int64_t i = 0; i < m * n; ++i)
        worst = std::max(worst, std::fabs(hc[i] - want[i]) / (1 + std::fabs(want[i])));
      std::vector<float> ts;
      for (int it = 0; it < 30; ++it) {
        cudaEventRecord(e0);
        go();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        ts.push_back(ms * 1000);
      }
      std::sort(ts.begin(), ts.end());
      printf("| %s | %s | %lld | %.1f | %.1e | %s |\n", sh.what, v.name, (long long)v.chunks,
             ts[15], worst, equal ? "yes" : "NO");
    }
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(p);
  }
  return 0;
}
