// Would a block of destination rows that walks its sources in phases reuse
// their rows in L1? (issue 29's f32 SpMM >= 1.5x cuSPARSE on reddit-like.)
//
// On reddit-like (233K nodes, 114.6M edges, mean in-degree 492) a block of
// R consecutive destination rows reads a source's row once per edge, but
// those R rows' in-edges name far fewer distinct sources: 54 % of the
// edges' (block, source) pairs are distinct at R = 512, 37 % at R = 1,024
// (counted on the CPU from ../shared/bench/peers/graphs.py's generator).
// A row of a CSR sorted by source within each row is summed in the CSR's
// order here as in the plain kernel, so the only change is *when* each
// edge is visited: the block walks the source ids in phases of T ids, and
// in a phase every warp adds its rows' edges whose source falls in the
// phase (a __syncthreads between phases). A phase's distinct source rows
// (a FP-wide slice of each) then stay in L1 while the block's warps reuse
// them. FP features a pass (grid.y passes): FP = 32 keeps a pass's slice of
// x (233K x 128 B = 30 MB) inside the L2 too.
//
// Rows of more than H edges (5.4 % of the edges at H = 4,096) would make
// their warp the block's straggler; they go to a split kernel (chunks of
// 2,048 edges a warp, partial rows, then a sum in chunk order), on a
// second stream beside the phased kernel.
//
// Variants (median ms of REPS after 3 warm-ups, CUDA events; each result
// compared with plain's):
//   plain       a warp a row, a float4 a lane, the edges in CSR order
//   phasedBatch V R T  V floats a lane (FP = 32 V), R rows a block, T ids a
//               phase (T = 2^30: one phase, no reuse order); a row's edges in
//               the phase 32 at a time, several gathers in flight
//   heavy       the split kernel alone, on the heavy rows
// (`phased` and `phasedReg`, one gather in flight per warp, ran in session
// 85 as commit 298968f's version of this file: all slower than plain.)
//   cusparse    cusparseSpMM, CSR, default algorithm and CSR_ALG2
//
//   python bench/probes/l2hot/gen.py PEERS reddit-like DIR
//   nvcc -O3 -arch=sm_90 spmm_phased.cu -lcusparse -o spmm_phased
//   ./spmm_phased DIR [REPS] [H]
#include <cuda_runtime.h>
#include <cusparse.h>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)
#define CS(x) do { cusparseStatus_t s_ = (x); if (s_ != CUSPARSE_STATUS_SUCCESS) { \
  printf("cuSPARSE %d at %d\n", int(s_), __LINE__); exit(1); } } while (0)

constexpr int F = 128;

template <typename T> std::vector<T> readAll(const std::string &p, size_t n) {
  std::vector<T> v(n);
  FILE *f = fopen(p.c_str(), "rb");
  if (!f || fread(v.data(), sizeof(T), n, f) != n) { printf("read %s\n", p.c_str()); exit(1); }
  fclose(f);
  return v;
}

// Edges [b, e) of a CSR summed by one warp, a float4 a lane, one edge after
// another.
__device__ __forceinline__ float4 warpSum(const int *__restrict__ col, const float *__restrict__ w,
                                          const float4 *__restrict__ x, int b, int e, int lane) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int k = b; k < e; ++k) {
    int s = __ldg(col + k);
    float ww = __ldg(w + k);
    float4 v = __ldg(x + size_t(s) * (F / 4) + lane);
    acc.x += ww * v.x; acc.y += ww * v.y; acc.z += ww * v.z; acc.w += ww * v.w;
  }
  return acc;
}

// A warp a row, in CSR order.
__global__ void __launch_bounds__(256) plain(const int *__restrict__ ptr, const int *__restrict__ col,
                                             const float *__restrict__ w, const float4 *__restrict__ x,
                                             float4 *__restrict__ y, int n) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (row >= n) return;
  y[size_t(row) * (F / 4) + lane] = warpSum(col, w, x, ptr[row], ptr[row + 1], lane);
}

template <int V> struct Vec;
template <> struct Vec<1> { using T = float; };
template <> struct Vec<2> { using T = float2; };
template <> struct Vec<4> { using T = float4; };

__device__ __forceinline__ void fma1(float *a, float w, float v) { a[0] += w * v; }
__device__ __forceinline__ void fma1(float *a, float w, float2 v) { a[0] += w * v.x; a[1] += w * v.y; }
__device__ __forceinline__ void fma1(float *a, float w, float4 v) {
  a[0] += w * v.x; a[1] += w * v.y; a[2] += w * v.z; a[3] += w * v.w;
}

// Block = W warps, each owning RPW of the light rows `rows` (R = W RPW a
// block); blockIdx.y = the pass (features [32 V y, 32 V (y + 1))). A row's
// cursor and next source in registers (a row with nothing in the phase
// costs a compare), its end in shared memory. Its edges in the phase are
// taken 32 at a time: sources and weights loaded by the warp's lanes at
// once, then the rows of x gathered with several loads in flight (as
// gnnc's team-per-row kernel does); the sum still adds them one after
// another in CSR order.
template <int V, int RPW, int MAXT>
__global__ void __launch_bounds__(MAXT, 1) phasedBatch(const int *__restrict__ ptr, const int *__restrict__ col,
                                                       const float *__restrict__ w, const float *__restrict__ x,
                                                       float *__restrict__ y, const int *__restrict__ rows,
                                                       int nrows, int n, int T) {
  using VT = typename Vec<V>::T;
  extern __shared__ int sh[];
  const int W = blockDim.x >> 5;
  int *end = sh;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int first = (blockIdx.x * W + warp) * RPW;
  const int fo = blockIdx.y * 32 * V + lane * V;
  float acc[RPW][V];
  int cur[RPW], nxt[RPW];
#pragma unroll
  for (int r = 0; r < RPW; ++r) {
#pragma unroll
    for (int v = 0; v < V; ++v) acc[r][v] = 0.f;
    int i = first + r;
    int row = i < nrows ? rows[i] : 0;
    cur[r] = i < nrows ? ptr[row] : 0;
    int e = i < nrows ? ptr[row + 1] : 0;
    nxt[r] = cur[r] < e ? __ldg(col + cur[r]) : INT_MAX;
    if (lane == 0) end[warp * RPW + r] = e;
  }
  __syncwarp();
  for (int lo = 0; lo < n; lo += T) {
    const int hi = lo + T;
    bool pending = false;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      if (nxt[r] < hi) {
        const int e = end[warp * RPW + r];
        int c = cur[r];
        while (true) {
          const int k = c + lane;
          const int s = k < e ? __ldg(col + k) : INT_MAX;
          const float wv = k < e ? __ldg(w + k) : 0.f;
          // (a row's sources ascend: the lanes in the phase come first)
          const int cnt = __popc(__ballot_sync(0xffffffffu, s < hi));
#pragma unroll 4
          for (int j = 0; j < cnt; ++j) {
            const int sj = __shfl_sync(0xffffffffu, s, j);
            const float wj = __shfl_sync(0xffffffffu, wv, j);
            const VT v = __ldg(reinterpret_cast<const VT *>(x + size_t(sj) * F + fo));
            fma1(acc[r], wj, v);
          }
          c += cnt;
          if (cnt < 32) {
            nxt[r] = __shfl_sync(0xffffffffu, s, cnt & 31);
            break;
          }
        }
        cur[r] = c;
      }
      pending |= nxt[r] != INT_MAX;
    }
    if (!__syncthreads_or(pending)) break;
  }
#pragma unroll
  for (int r = 0; r < RPW; ++r) {
    int i = first + r;
    if (i < nrows) {
      VT o;
      float *p = reinterpret_cast<float *>(&o);
#pragma unroll
      for (int v = 0; v < V; ++v) p[v] = acc[r][v];
      *reinterpret_cast<VT *>(y + size_t(rows[i]) * F + fo) = o;
    }
  }
}

// Heavy rows: chunk k = (row, begin, end) summed by one warp into part[k].
__global__ void __launch_bounds__(256) heavyPart(const int *__restrict__ chunks, int nchunks,
                                                 const int *__restrict__ col, const float *__restrict__ w,
                                                 const float4 *__restrict__ x, float4 *__restrict__ part) {
  int k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (k >= nchunks) return;
  part[size_t(k) * (F / 4) + lane] = warpSum(col, w, x, chunks[3 * k + 1], chunks[3 * k + 2], lane);
}

// Heavy row h: its chunks [cfirst[h], cfirst[h + 1]) summed in order.
__global__ void __launch_bounds__(256) heavyFinal(const int *__restrict__ hrows, const int *__restrict__ cfirst,
                                                  int nheavy, const float4 *__restrict__ part,
                                                  float4 *__restrict__ y) {
  int h = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (h >= nheavy) return;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int k = cfirst[h]; k < cfirst[h + 1]; ++k) {
    float4 v = part[size_t(k) * (F / 4) + lane];
    acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
  }
  y[size_t(hrows[h]) * (F / 4) + lane] = acc;
}

static int REPS = 10;

template <typename Fn> float timeIt(Fn f) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  CK(cudaGetLastError());
  std::vector<float> ts;
  for (int i = 0; i < REPS; ++i) {
    CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

int main(int argc, char **argv) {
  if (argc < 2) { printf("usage: spmm_phased DIR [REPS] [H]\n"); return 1; }
  std::string dir = argv[1];
  if (argc > 2) REPS = atoi(argv[2]);
  int H = argc > 3 ? atoi(argv[3]) : 4096;
  int n; long long e;
  { FILE *f = fopen((dir + "/meta.txt").c_str(), "r"); if (!f || fscanf(f, "%d %lld", &n, &e) != 2) return 1; fclose(f); }
  auto ptr = readAll<int>(dir + "/ptr.i32", n + 1);
  auto col = readAll<int>(dir + "/col.i32", e);
  auto w = readAll<float>(dir + "/w.f32", e);
  for (int r = 0; r < n; ++r)
    for (int k = ptr[r] + 1; k < ptr[r + 1]; ++k)
      if (col[k] < col[k - 1]) { printf("row %d not sorted by source\n", r); return 1; }
  std::vector<int> light, heavy, chunks, cfirst;
  long long heavyEdges = 0;
  for (int r = 0; r < n; ++r) {
    int d = ptr[r + 1] - ptr[r];
    if (d <= H) { light.push_back(r); continue; }
    cfirst.push_back(int(chunks.size() / 3));
    heavy.push_back(r); heavyEdges += d;
    for (int b = ptr[r]; b < ptr[r + 1]; b += 2048) {
      chunks.push_back(r); chunks.push_back(b); chunks.push_back(std::min(b + 2048, ptr[r + 1]));
    }
  }
  cfirst.push_back(int(chunks.size() / 3));
  int nchunks = int(chunks.size() / 3), nheavy = int(heavy.size()), nlight = int(light.size());
  printf("nodes %d edges %lld; rows above %d edges: %d (%.1f %% of the edges, %d chunks)\n", n, e, H,
         nheavy, 100.0 * heavyEdges / e, nchunks);
  std::vector<float> x(size_t(n) * F);
  srand(7);
  for (auto &v : x) v = float(rand()) / RAND_MAX - 0.5f;

  int *dPtr, *dCol, *dLight, *dHeavy, *dChunks, *dCfirst; float *dW, *dX, *dY, *dPart;
  CK(cudaMalloc(&dPtr, (n + 1) * 4)); CK(cudaMalloc(&dCol, e * 4)); CK(cudaMalloc(&dW, e * 4));
  CK(cudaMalloc(&dLight, std::max(1, nlight) * 4)); CK(cudaMalloc(&dHeavy, std::max(1, nheavy) * 4));
  CK(cudaMalloc(&dChunks, std::max<size_t>(3, chunks.size()) * 4)); CK(cudaMalloc(&dCfirst, cfirst.size() * 4));
  CK(cudaMalloc(&dX, size_t(n) * F * 4)); CK(cudaMalloc(&dY, size_t(n) * F * 4));
  CK(cudaMalloc(&dPart, std::max<size_t>(1, nchunks) * F * 4));
  CK(cudaMemcpy(dPtr, ptr.data(), (n + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dCol, col.data(), e * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dW, w.data(), e * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dX, x.data(), size_t(n) * F * 4, cudaMemcpyHostToDevice));
  if (nlight) CK(cudaMemcpy(dLight, light.data(), nlight * 4, cudaMemcpyHostToDevice));
  if (nheavy) CK(cudaMemcpy(dHeavy, heavy.data(), nheavy * 4, cudaMemcpyHostToDevice));
  if (nchunks) CK(cudaMemcpy(dChunks, chunks.data(), chunks.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dCfirst, cfirst.data(), cfirst.size() * 4, cudaMemcpyHostToDevice));

  std::vector<float> ref(size_t(n) * F), got(size_t(n) * F);
  auto compare = [&](const char *what) {
    CK(cudaMemcpy(got.data(), dY, size_t(n) * F * 4, cudaMemcpyDeviceToHost));
    double worst = 0; size_t same = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, double(fabsf(got[i] - ref[i])) / (1e-3 + fabsf(ref[i])));
      same += got[i] == ref[i];
    }
    printf("  %s against plain: worst relative %.3g, %.4f of the values equal bit for bit\n", what,
           worst, double(same) / got.size());
  };
  int blocks = int((size_t(n) * 32 + 255) / 256);
  float tPlain = timeIt([&] { plain<<<blocks, 256>>>(dPtr, dCol, dW, (const float4 *)dX, (float4 *)dY, n); });
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(ref.data(), dY, size_t(n) * F * 4, cudaMemcpyDeviceToHost));
  printf("plain %.3f ms\n", tPlain);

  cudaStream_t side; CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t fork, join; CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  auto heavyRun = [&](cudaStream_t s) {
    if (!nheavy) return;
    heavyPart<<<(nchunks * 32 + 255) / 256, 256, 0, s>>>(dChunks, nchunks, dCol, dW, (const float4 *)dX,
                                                        (float4 *)dPart);
    heavyFinal<<<(nheavy * 32 + 255) / 256, 256, 0, s>>>(dHeavy, dCfirst, nheavy, (const float4 *)dPart,
                                                         (float4 *)dY);
  };
  float tHeavy = timeIt([&] { heavyRun(0); });
  printf("heavy rows alone %.3f ms\n", tHeavy);

  auto variant = [&](auto kernel, const char *name, int V, int RPW, int W, int T) {
    int R = W * RPW, nb = (nlight + R - 1) / R;
    size_t shm = size_t(2) * R * 4;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    dim3 grid(nb, F / (32 * V));
    auto light = [&](cudaStream_t s) {
      kernel<<<grid, W * 32, shm, s>>>(dPtr, dCol, dW, dX, dY, dLight, nlight, n, T);
    };
    float tl = timeIt([&] { light(0); });
    float tb = timeIt([&] {
      CK(cudaEventRecord(fork, 0)); CK(cudaStreamWaitEvent(side, fork, 0));
      heavyRun(side);
      light(0);
      CK(cudaEventRecord(join, side)); CK(cudaStreamWaitEvent(0, join, 0));
    });
    printf("%s V=%d RPW=%d W=%d (R=%d) T=%d: light rows %.3f ms, with the heavy beside %.3f ms "
           "(plain / it %.2fx)\n", name, V, RPW, W, R, T, tl, tb, tPlain / tb);
    compare("phased");
    return tb;
  };
  // Session 85's first run measured phased and phasedReg (T 512 to 4,096):
  // every variant slower than plain (../../results/checks-s85/). Now the
  // batched loads, each configuration also in one phase (T = 2^30: the
  // same kernel without the reuse order).
  float best = 1e30f;
  for (int T : {1024, 2048, 4096, 1 << 30}) {
    best = std::min(best, variant(phasedBatch<2, 16, 512>, "phasedBatch", 2, 16, 16, T));  // R 256, FP 64
    best = std::min(best, variant(phasedBatch<1, 32, 512>, "phasedBatch", 1, 32, 16, T));  // R 512, FP 32
    best = std::min(best, variant(phasedBatch<4, 8, 512>, "phasedBatch", 4, 8, 16, T));    // R 128, FP 128
    best = std::min(best, variant(phasedBatch<1, 16, 1024>, "phasedBatch", 1, 16, 32, T)); // R 512, FP 32
  }
  // cuSPARSE on the same CSR.
  cusparseHandle_t h; CS(cusparseCreate(&h));
  cusparseSpMatDescr_t A; cusparseDnMatDescr_t X, Y;
  CS(cusparseCreateCsr(&A, n, n, e, dPtr, dCol, dW, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CS(cusparseCreateDnMat(&X, n, F, F, dX, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CS(cusparseCreateDnMat(&Y, n, F, F, dY, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  float one = 1.f, zero = 0.f, bestCs = 1e30f;
  for (auto alg : {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG2}) {
    size_t bytes = 0;
    CS(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                               &one, A, X, &zero, Y, CUDA_R_32F, alg, &bytes));
    void *buf = nullptr; if (bytes) CK(cudaMalloc(&buf, bytes));
    float t = timeIt([&] { CS(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                          &one, A, X, &zero, Y, CUDA_R_32F, alg, buf)); });
    compare("cusparse");
    printf("cusparse alg %d %.3f ms\n", int(alg), t);
    bestCs = std::min(bestCs, t);
    if (buf) CK(cudaFree(buf));
  }
  printf("best phased %.3f ms; cuSPARSE's best / it %.2fx; plain / it %.2fx\n", best, bestCs / best, tPlain / best);
  return 0;
}
