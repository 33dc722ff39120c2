// A probe (session 72): the weight-gradient GEMM C = Aᵀ B over many rows
// (lib/Runtime/Library.cu's atbSlices + sumSlices, the double-precision row
// split) against variants whose blocks split their slice's rows among G
// groups of 4 warps (more warps in flight per SM, the same partials), and
// cuBLAS's SGEMM for scale. Checks every variant against a double product
// (relative 1e-6) and run-to-run equality.
//   nvcc -O3 -arch=sm_90 -lcublas atb.cu -o atb && ./atb
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

// G groups of 4 warps; group z of a block takes stages z, z + G, ... of
// its slice (32 rows each), staged as f32 in shared memory (rows padded to
// 72 floats: a fragment's 4 rows x 8 columns fall in 32 banks), widened to
// double at the fragment loads; the groups' sums are added in group order
// at the end (deterministic).
template <int G>
__global__ void __launch_bounds__(128 * G)
    atbGroups(const float *__restrict__ a, const float *__restrict__ b,
              double *partials, int64_t m, int64_t n, int64_t k,
              int64_t rows) {
  constexpr int T = kT, R = kR, P = T + 8;
  constexpr int kPer = R * T / 128;
  extern __shared__ float smem[];
  int grp = threadIdx.x / 128, tid = threadIdx.x % 128;
  float(*sa)[P] = reinterpret_cast<float(*)[P]>(smem + grp * 2 * R * P);
  float(*sb)[P] = reinterpret_cast<float(*)[P]>(smem + grp * 2 * R * P + R * P);
  int64_t i0 = int64_t(blockIdx.y) * T, j0 = int64_t(blockIdx.x) * T;
  int64_t r0 = int64_t(blockIdx.z) * rows;
  int64_t r1 = r0 + rows < k ? r0 + rows : k;
  int lane = tid % 32, warp = tid / 32;
  int wi = (warp / 2) * (T / 2), wj = (warp % 2) * (T / 2);
  int g = lane / 4, t = lane % 4;
  constexpr int UM = T / 32, UN = T / 16;
  double acc[UM][UN][4] = {};
  float pa[kPer], pb[kPer];
  auto load = [&](int64_t r) {
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      int e = tid + 128 * p, q = e / T, col = e % T;
      int64_t row = r + q;
      bool in = row < r1;
      pa[p] = in && i0 + col < m ? __ldg(a + row * m + i0 + col) : 0.0f;
      pb[p] = in && j0 + col < n ? __ldg(b + row * n + j0 + col) : 0.0f;
    }
  };
  int64_t first = r0 + int64_t(grp) * R;
  if (first < r1)
    load(first);
  // Every group runs the same number of stages (the block's barriers).
  int64_t stages = (r1 - r0 + R - 1) / R;
  int64_t mine = stages > grp ? (stages - grp + G - 1) / G : 0;
  int64_t most = (stages + G - 1) / G;
  for (int64_t s = 0; s < most; ++s) {
    int64_t r = first + s * G * R;
    if (s < mine) {
#pragma unroll
      for (int p = 0; p < kPer; ++p) {
        int e = tid + 128 * p, q = e / T, col = e % T;
        sa[q][col] = pa[p];
        sb[q][col] = pb[p];
      }
    }
    __syncthreads();
    if (s + 1 < mine)
      load(r + G * R);
    if (s < mine) {
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
    }
    __syncthreads();
  }
  // The groups' sums, in group order: group z > 0 leaves its accumulators
  // in shared memory (as doubles, over the staging buffers), group 0 adds
  // them one group after the other.
  double *sums = reinterpret_cast<double *>(smem);
  for (int z = 1; z < G; ++z) {
    if (grp == z) {
#pragma unroll
      for (int u = 0; u < UM; ++u)
#pragma unroll
        for (int v = 0; v < UN; ++v)
#pragma unroll
          for (int h = 0; h < 4; ++h)
            sums[((u * UN + v) * 4 + h) * 128 + tid] = acc[u][v][h];
    }
    __syncthreads();
    if (grp == 0) {
#pragma unroll
      for (int u = 0; u < UM; ++u)
#pragma unroll
        for (int v = 0; v < UN; ++v)
#pragma unroll
          for (int h = 0; h < 4; ++h)
            acc[u][v][h] += sums[((u * UN + v) * 4 + h) * 128 + tid];
    }
    __syncthreads();
  }
  if (grp != 0)
    return;
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


// As atbGroups, the stages copied into shared memory with cp.async (two
// buffers per group: the next stage's copy runs while this one's mma's do;
// no prefetch registers).
__device__ __forceinline__ void copy4(float *dst, const float *src, bool in) {
  unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d),
               "l"(src), "r"(in ? 4 : 0));
}
template <int G>
__global__ void __launch_bounds__(128 * G)
    atbAsync(const float *__restrict__ a, const float *__restrict__ b,
             double *partials, int64_t m, int64_t n, int64_t k,
             int64_t rows) {
  constexpr int T = kT, R = kR, P = T + 8;
  constexpr int kPer = R * T / 128;
  extern __shared__ float smem[];
  int grp = threadIdx.x / 128, tid = threadIdx.x % 128;
  float *base = smem + grp * 4 * R * P; // [buffer][A, B][R][P]
  int64_t i0 = int64_t(blockIdx.y) * T, j0 = int64_t(blockIdx.x) * T;
  int64_t r0 = int64_t(blockIdx.z) * rows;
  int64_t r1 = r0 + rows < k ? r0 + rows : k;
  int lane = tid % 32, warp = tid / 32;
  int wi = (warp / 2) * (T / 2), wj = (warp % 2) * (T / 2);
  int g = lane / 4, t = lane % 4;
  constexpr int UM = T / 32, UN = T / 16;
  double acc[UM][UN][4] = {};
  auto issue = [&](int64_t r, int buf) {
    float *sa = base + buf * 2 * R * P, *sb = sa + R * P;
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      int e = tid + 128 * p, q = e / T, col = e % T;
      int64_t row = r + q;
      bool in = row < r1;
      bool ia = in && i0 + col < m, ib = in && j0 + col < n;
      copy4(sa + q * P + col, ia ? a + row * m + i0 + col : a, ia);
      copy4(sb + q * P + col, ib ? b + row * n + j0 + col : b, ib);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };
  int64_t first = r0 + int64_t(grp) * R;
  int64_t stages = (r1 - r0 + R - 1) / R;
  int64_t mine = stages > grp ? (stages - grp + G - 1) / G : 0;
  int64_t most = (stages + G - 1) / G;
  if (mine > 0)
    issue(first, 0);
  for (int64_t s = 0; s < most; ++s) {
    if (s + 1 < mine) {
      issue(first + (s + 1) * G * R, int((s + 1) & 1));
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
    }
    __syncthreads();
    if (s < mine) {
      const float(*sa)[P] = reinterpret_cast<const float(*)[P]>(base + (s & 1) * 2 * R * P);
      const float(*sb)[P] = sa + R;
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
    }
    __syncthreads();
  }
  double *sums = reinterpret_cast<double *>(smem);
  for (int z = 1; z < G; ++z) {
    if (grp == z) {
#pragma unroll
      for (int u = 0; u < UM; ++u)
#pragma unroll
        for (int v = 0; v < UN; ++v)
#pragma unroll
          for (int h = 0; h < 4; ++h)
            sums[((u * UN + v) * 4 + h) * 128 + tid] = acc[u][v][h];
    }
    __syncthreads();
    if (grp == 0) {
#pragma unroll
      for (int u = 0; u < UM; ++u)
#pragma unroll
        for (int v = 0; v < UN; ++v)
#pragma unroll
          for (int h = 0; h < 4; ++h)
            acc[u][v][h] += sums[((u * UN + v) * 4 + h) * 128 + tid];
    }
    __syncthreads();
  }
  if (grp != 0)
    return;
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

void run(int variant, const float *a, const float *b, double *p, float *c,
         int64_t m, int64_t n, int64_t k, int64_t chunks, cudaStream_t s) {
  int64_t rows = (k + chunks - 1) / chunks;
  dim3 grid(unsigned((n + 63) / 64), unsigned((m + 63) / 64), unsigned(chunks));
  constexpr int P = kT + 8;
  if (variant == 0)
    atbOld<<<grid, 128, 0, s>>>(a, b, p, m, n, k, rows);
  else if (variant == 1)
    atbGroups<1><<<grid, 128, 2 * kR * P * 4 > 32 * 128 * 8 ? 2 * kR * P * 4 : 32 * 128 * 8, s>>>(a, b, p, m, n, k, rows);
  else if (variant == 2)
    atbGroups<2><<<grid, 256, std::max(2 * 2 * kR * P * 4, 32 * 128 * 8), s>>>(a, b, p, m, n, k, rows);
  else if (variant == 4)
    atbGroups<4><<<grid, 512, std::max(4 * 2 * kR * P * 4, 32 * 128 * 8), s>>>(a, b, p, m, n, k, rows);
  else if (variant == 12)
    atbAsync<2><<<grid, 256, 2 * 4 * kR * P * 4, s>>>(a, b, p, m, n, k, rows);
  else if (variant == 14)
    atbAsync<4><<<grid, 512, 4 * 4 * kR * P * 4, s>>>(a, b, p, m, n, k, rows);
  sumSlices<<<unsigned((m * n + 31) / 32), 32 * kSumWarps, 0, s>>>(p, chunks, m * n, 1.0, 0.0, c);
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s\n", prop.name);
  CK(cudaFuncSetAttribute(atbGroups<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000));
  CK(cudaFuncSetAttribute(atbGroups<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000));
  CK(cudaFuncSetAttribute(atbAsync<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000));
  CK(cudaFuncSetAttribute(atbAsync<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000));
  cublasHandle_t h;
  cublasCreate(&h);
  struct Shape { int64_t k, m, n; const char *what; };
  Shape shapes[] = {{35970, 64, 64, "GINE QM9 dW (36K nodes)"},
                    {76008, 4, 64, "GINE QM9 dW_edge (76K edges, m=4)"},
                    {19717, 128, 64, "pubmed-like 128->64"},
                    {40000, 128, 256, "40K x 128 x 256"},
                    {300000, 64, 64, "300K x 64 x 64"},
                    {232965, 128, 128, "reddit-like nodes 128x128"}};
  printf("| shape | chunks | old us | G=1 us | G=2 us | G=4 us | async G=2 us | async G=4 us | cuBLAS sgemm us | worst rel err (old, 1, 2, 4, a2, a4) | repeat equal |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
  for (const Shape &sh : shapes) {
    int64_t k = sh.k, m = sh.m, n = sh.n, chunks = chunksFor(k, m, n);
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
    CK(cudaMalloc(&p, chunks * m * n * 8));
    CK(cudaMemcpy(a, ha.data(), k * m * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), k * n * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double times[7];
    double errs[6];
    bool equal = true;
    int variants[] = {0, 1, 2, 4, 12, 14};
    for (int vi = 0; vi < 6; ++vi) {
      int v = variants[vi];
      std::vector<float> first(m * n), hc(m * n);
      for (int rep = 0; rep < 2; ++rep) {
        run(v, a, b, p, c, m, n, k, chunks, 0);
        CK(cudaGetLastError());
        CK(cudaMemcpy(hc.data(), c, m * n * 4, cudaMemcpyDeviceToHost));
        if (rep == 0) first = hc;
        else if (first != hc) equal = false;
      }
      double worst = 0;
      for (int64_t i = 0; i < m * n; ++i)
        worst = std::max(worst, std::fabs(hc[i] - want[i]) / (1 + std::fabs(want[i])));
      errs[vi] = worst;
      for (int w = 0; w < 20; ++w) run(v, a, b, p, c, m, n, k, chunks, 0);
      CK(cudaEventRecord(e0));
      for (int w = 0; w < 200; ++w) run(v, a, b, p, c, m, n, k, chunks, 0);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      times[vi] = ms * 1e3 / 200;
    }
    float one = 1, zero = 0;
    // Row-major C (m x n) = Aᵀ B: column-major Cᵀ (n x m) = Bᵀ... = B^T(k x n)^T
    for (int w = 0; w < 20; ++w)
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, m, k, &one, b, n, a, m, &zero, c, n);
    CK(cudaEventRecord(e0));
    for (int w = 0; w < 200; ++w)
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, m, k, &one, b, n, a, m, &zero, c, n);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    times[6] = ms * 1e3 / 200;
    printf("| %s (%ld x %ld x %ld) | %ld | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1e %.1e %.1e %.1e %.1e %.1e | %s |\n",
           sh.what, (long)k, (long)m, (long)n, (long)chunks, times[0], times[1], times[2],
           times[3], times[4], times[5], times[6], errs[0], errs[1], errs[2], errs[3], errs[4],
           errs[5], equal ? "yes" : "NO");
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(p);
  }
  return 0;
}
