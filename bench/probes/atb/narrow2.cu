// A probe (session 82): the narrow weight gradient (atbNarrow, GINE's edge
// projection: C = Aᵀ B with a side of C at most 16) as the library had it
// (session 73: every thread widens its own copies of the narrow rows to
// double, N + 1 conversions a row) against the narrow rows staged in shared
// memory as doubles once per block (one conversion a row a thread), at the
// compiler's slice count and more, with U rows unrolled and ST unrolled
// steps a stage. Every variant checked against a double product (relative
// 1e-6), run to run (bits) and against the old kernel at the same slices
// (bits: the same sums in the same order). Median of 30 runs of slices +
// sum, CUDA events, data resident.
//   nvcc -O3 -arch=sm_90 --expt-relaxed-constexpr narrow2.cu -o narrow2 && ./narrow2
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

constexpr int kNarrowMax = 16, kNarrowWide = 64, kNarrowUnroll = 4;
constexpr int narrowGroups(int n) { return n <= 8 ? 8 : 4; }

// The library's kernel before session 82.
template <int N, bool NarrowA, bool RowSums>
__global__ void __launch_bounds__(kNarrowWide *narrowGroups(N))
    atbOld(const float *__restrict__ a, const float *__restrict__ b,
              double *partials, int64_t m, int64_t n, int64_t k,
              int64_t rows, int64_t stride) {
  constexpr int G = narrowGroups(N), U = kNarrowUnroll;
  // A's sums a thread keeps: one (its wide index) or N (a narrow A's).
  constexpr int S = RowSums ? (NarrowA ? N : 1) : 0;
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
  if (w < wide) {
    int64_t r = r0 + group;
    for (; r + (U - 1) * G < r1; r += U * G) {
      float v[U], x[U][N];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        v[u] = __ldg(wideOp + (r + u * G) * wide + w);
#pragma unroll
        for (int q = 0; q < N; ++q)
          x[u][q] = q < narrow ? __ldg(narrowOp + (r + u * G) * narrow + q)
                               : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int q = 0; q < N; ++q)
          acc[q] += double(x[u][q]) * double(v[u]);
        if constexpr (S == 1)
          acc[N] += double(v[u]);
        else if constexpr (S == N)
#pragma unroll
          for (int q = 0; q < N; ++q)
            acc[N + q] += double(x[u][q]);
      }
    }
    for (; r < r1; r += G) {
      double v = double(wideOp[r * wide + w]);
#pragma unroll
      for (int q = 0; q < N; ++q)
        if (q < narrow) {
          double x = double(narrowOp[r * narrow + q]);
          acc[q] += x * v;
          if constexpr (S == N)
            acc[N + q] += x;
        }
      if constexpr (S == 1)
        acc[N] += v;
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
  if (group > 0 || w >= wide)
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

// The staged kernel (the library's from session 82 with U and the stage's
// steps as parameters).
template <int N, bool NarrowA, bool RowSums, int U_, int ST_>
__global__ void __launch_bounds__(kNarrowWide *narrowGroups(N))
    atbStaged(const float *__restrict__ a, const float *__restrict__ b,
              double *partials, int64_t m, int64_t n, int64_t k,
              int64_t rows, int64_t stride) {
  constexpr int G = narrowGroups(N), U = U_;
  constexpr int Threads = kNarrowWide * G, Stage = G * U * ST_;
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

constexpr int kSumWarps = 8;
__global__ void __launch_bounds__(32 * kSumWarps)
    sumSlices(const double *partials, int64_t chunks, int64_t mn,
              int64_t stride, float *c, float *rowSums) {
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
  if (idx >= mn)
    rowSums[idx - mn] = float(t);
  else
    c[idx] = float(t);
}

// ProgramLowering's slices (session 81).
int64_t chunksFor(int64_t k, int64_t m, int64_t n) {
  int64_t tiles = (m + 63) / 64 * ((n + 63) / 64);
  auto slices = [&](int64_t rows, int64_t blocks) {
    return std::min<int64_t>((k + rows - 1) / rows, std::max<int64_t>(1, blocks / tiles));
  };
  return std::max<int64_t>(std::max(slices(128, 128), slices(512, 256)), 1);
}

template <int N, bool NA, bool RS>
void launchOne(int id, const float *a, const float *b, double *p, int64_t m, int64_t n,
               int64_t k, int64_t chunks, int64_t rows, int64_t stride) {
  int64_t wide = NA ? n : m;
  dim3 grid(unsigned((wide + 63) / 64), 1, unsigned(chunks));
  int t = 64 * narrowGroups(N);
  switch (id) {
  case 0: atbOld<N, NA, RS><<<grid, t>>>(a, b, p, m, n, k, rows, stride); break;
  case 1: atbStaged<N, NA, RS, 4, 4><<<grid, t>>>(a, b, p, m, n, k, rows, stride); break;
  case 2: atbStaged<N, NA, RS, 4, 2><<<grid, t>>>(a, b, p, m, n, k, rows, stride); break;
  case 3: atbStaged<N, NA, RS, 8, 2><<<grid, t>>>(a, b, p, m, n, k, rows, stride); break;
  case 4: atbStaged<N, NA, RS, 2, 8><<<grid, t>>>(a, b, p, m, n, k, rows, stride); break;
  }
}

template <bool NA, bool RS>
void launchN(int id, int64_t narrow, const float *a, const float *b, double *p, int64_t m,
             int64_t n, int64_t k, int64_t chunks, int64_t rows, int64_t stride) {
  if (narrow <= 4) launchOne<4, NA, RS>(id, a, b, p, m, n, k, chunks, rows, stride);
  else if (narrow <= 8) launchOne<8, NA, RS>(id, a, b, p, m, n, k, chunks, rows, stride);
  else launchOne<16, NA, RS>(id, a, b, p, m, n, k, chunks, rows, stride);
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  struct Shape { int64_t k, m, n; bool sums; const char *what; };
  Shape shapes[] = {{76008, 64, 4, true, "GINE dW_edge + bias (64 x 4, sums)"},
                    {76008, 4, 64, false, "GINE dW_edge transposed (4 x 64)"},
                    {35970, 64, 4, true, "36K x 64 x 4, sums"},
                    {2000000, 64, 4, true, "2M x 64 x 4, sums"},
                    {500000, 8, 128, true, "500K x 8 x 128, narrow A sums"},
                    {300001, 200, 16, false, "300K x 200 x 16"},
                    {1000, 16, 200, true, "1K x 16 x 200, narrow A sums"}};
  const char *names[] = {"old", "staged U4 ST4", "staged U4 ST2", "staged U8 ST2",
                         "staged U2 ST8"};
  printf("| shape | variant | chunks | us | worst rel err | repeat equal | bits = old |\n"
         "| --- | --- | ---: | ---: | ---: | --- | --- |\n");
  for (const Shape &sh : shapes) {
    int64_t k = sh.k, m = sh.m, n = sh.n, base = chunksFor(k, m, n);
    bool na = m <= n;
    int64_t narrow = na ? m : n;
    int64_t mn = m * n, stride = mn + (sh.sums ? m : 0);
    std::vector<float> ha(k * m), hb(k * n);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-0.5f, 0.5f);
    for (auto &v : ha) v = d(rng);
    for (auto &v : hb) v = d(rng);
    std::vector<double> want(stride, 0.0);
    for (int64_t r = 0; r < k; ++r)
      for (int64_t i = 0; i < m; ++i) {
        double x = ha[r * m + i];
        if (sh.sums) want[mn + i] += x;
        for (int64_t j = 0; j < n; ++j)
          want[i * n + j] += x * hb[r * n + j];
      }
    float *a, *b, *c;
    double *p;
    CK(cudaMalloc(&a, k * m * 4));
    CK(cudaMalloc(&b, k * n * 4));
    CK(cudaMalloc(&c, stride * 4));
    CK(cudaMalloc(&p, 4 * base * stride * 8));
    CK(cudaMemcpy(a, ha.data(), k * m * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), k * n * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int64_t mult : {1, 2, 4}) {
      int64_t ch = std::min<int64_t>(base * mult, std::max<int64_t>(k, 1));
      int64_t rows = (k + ch - 1) / ch;
      std::vector<float> oldBits;
      for (int id = 0; id < 5; ++id) {
        auto go = [&]() {
          if (na) sh.sums ? launchN<true, true>(id, narrow, a, b, p, m, n, k, ch, rows, stride)
                          : launchN<true, false>(id, narrow, a, b, p, m, n, k, ch, rows, stride);
          else sh.sums ? launchN<false, true>(id, narrow, a, b, p, m, n, k, ch, rows, stride)
                       : launchN<false, false>(id, narrow, a, b, p, m, n, k, ch, rows, stride);
          sumSlices<<<unsigned((stride + 31) / 32), 32 * kSumWarps>>>(p, ch, mn, stride, c,
                                                                      c + mn);
        };
        std::vector<float> first(stride), hc(stride);
        bool equal = true;
        for (int rep = 0; rep < 2; ++rep) {
          go();
          CK(cudaGetLastError());
          CK(cudaMemcpy(hc.data(), c, stride * 4, cudaMemcpyDeviceToHost));
          if (rep == 0) first = hc; else if (first != hc) equal = false;
        }
        if (id == 0) oldBits = hc;
        double worst = 0;
        for (int64_t i = 0; i < stride; ++i)
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
        printf("| %s | %s | %lld | %.1f | %.1e | %s | %s |\n", sh.what, names[id],
               (long long)ch, ts[15], worst, equal ? "yes" : "NO",
               hc == oldBits ? "yes" : "NO");
        fflush(stdout);
      }
    }
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(p);
  }
  return 0;
}
