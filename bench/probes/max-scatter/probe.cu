// Probe behind bench/results/tie-walks-h100/: the max backward's scatter
// (F = 128) on one graph, the generated kernels against hand-written
// variants. Build and run with bench/probes/max-scatter/run.sh, which dumps
// the generated kernels (kernels.cu) with two gnn-run binaries first.
//   s0..s3    a lane per element / float4 or float2 atomics / float4 loads
//   gen*      the old backward (a team walks every tie; unroll 4 or 16; rows
//             in decreasing degree; the tie walks alone; one team's walk)
//   egnew     the new backward (long rows walked by the block), egor the
//             same with __syncthreads_or in place of the block reduction
//             (timing only: it walks more ties than it should)
//   bwalk     one block walking one tie (musae-github's 3324-edge row)
// Inputs are gnn-run's seeded ones (SplitMix64), so the ties are its ties.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>
#include "kernels.cu"
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
constexpr int F = 128;

__global__ void fwd_codes(long long nodes, const int *rp, const int *col, const float *x, float *out, float *code) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long row = t / 32, lane = t % 32;
  if (row >= nodes) return;
  int b = rp[row], e = rp[row + 1];
  float a[4], c[4];
  for (int j = 0; j < 4; ++j) { a[j] = -INFINITY; c[j] = -1.f; }
#pragma unroll 4
  for (int p = b; p < e; ++p) {
    int nbr = __ldg(col + p);
    float4 v = __ldg(reinterpret_cast<const float4 *>(x + (long long)nbr * F + lane * 4));
    float vv[4] = {v.x, v.y, v.z, v.w};
    float id = nbr < 16777216 ? (float)nbr : -2.f;
    for (int j = 0; j < 4; ++j) {
      float nc = vv[j] > a[j] ? id : (vv[j] == a[j] ? (c[j] == id ? c[j] : -2.f) : c[j]);
      a[j] = fmaxf(a[j], vv[j]); c[j] = nc;
    }
  }
  bool empty = e == b;
  *reinterpret_cast<float4 *>(out + row * F + lane * 4) = empty ? make_float4(0, 0, 0, 0) : make_float4(a[0], a[1], a[2], a[3]);
  *reinterpret_cast<float4 *>(code + row * F + lane * 4) = make_float4(c[0], c[1], c[2], c[3]);
}

// S0: a lane per element (the generated kernel without the tie walk).
__global__ void s0(float *dx, long long nodes, const float *code, const float *dy) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= nodes * F) return;
  float c = __ldg(code + t);
  if (c >= 0.f) { long long w = (long long)c; if (w < nodes) atomicAdd(dx + w * F + t % F, __ldg(dy + t)); }
  unsigned m = c < -1.f ? 1u << (threadIdx.x & 31) : 0;
  for (int o = 1; o < 32; o <<= 1) m |= __shfl_xor_sync(~0u, m, o);
  if (m == 12345u) dx[0] = 1.f;
}
// S1: a lane per 4 elements, a float4 atomic where the four codes agree.
__global__ void s1(float *dx, long long nodes, const float *code, const float *dy) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= nodes * F / 4) return;
  float4 c = __ldg(reinterpret_cast<const float4 *>(code) + t);
  float4 g = __ldg(reinterpret_cast<const float4 *>(dy) + t);
  long long k = (t * 4) % F;
  if (c.x >= 0.f && c.x == c.y && c.x == c.z && c.x == c.w) {
    long long w = (long long)c.x;
    if (w < nodes) atomicAdd(reinterpret_cast<float4 *>(dx + w * F + k), g);
  } else {
    float cc[4] = {c.x, c.y, c.z, c.w}, gg[4] = {g.x, g.y, g.z, g.w};
    for (int j = 0; j < 4; ++j) if (cc[j] >= 0.f) { long long w = (long long)cc[j]; if (w < nodes) atomicAdd(dx + w * F + k + j, gg[j]); }
  }
  unsigned m = __ballot_sync(~0u, c.x < -1.f || c.y < -1.f || c.z < -1.f || c.w < -1.f);
  if (m == 12345u) dx[0] = 1.f;
}
// S2: a lane per 2 elements, float2 atomics.
__global__ void s2(float *dx, long long nodes, const float *code, const float *dy) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= nodes * F / 2) return;
  float2 c = __ldg(reinterpret_cast<const float2 *>(code) + t);
  float2 g = __ldg(reinterpret_cast<const float2 *>(dy) + t);
  long long k = (t * 2) % F;
  if (c.x >= 0.f && c.x == c.y) {
    long long w = (long long)c.x;
    if (w < nodes) atomicAdd(reinterpret_cast<float2 *>(dx + w * F + k), g);
  } else {
    if (c.x >= 0.f) { long long w = (long long)c.x; if (w < nodes) atomicAdd(dx + w * F + k, g.x); }
    if (c.y >= 0.f) { long long w = (long long)c.y; if (w < nodes) atomicAdd(dx + w * F + k + 1, g.y); }
  }
  unsigned m = __ballot_sync(~0u, c.x < -1.f || c.y < -1.f);
  if (m == 12345u) dx[0] = 1.f;
}
// S3: a lane per 4 elements, scalar atomics only (vector loads alone).
__global__ void s3(float *dx, long long nodes, const float *code, const float *dy) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= nodes * F / 4) return;
  float4 c = __ldg(reinterpret_cast<const float4 *>(code) + t);
  float4 g = __ldg(reinterpret_cast<const float4 *>(dy) + t);
  long long k = (t * 4) % F;
  float cc[4] = {c.x, c.y, c.z, c.w}, gg[4] = {g.x, g.y, g.z, g.w};
  for (int j = 0; j < 4; ++j) if (cc[j] >= 0.f) { long long w = (long long)cc[j]; if (w < nodes) atomicAdd(dx + w * F + k + j, gg[j]); }
  unsigned m = __ballot_sync(~0u, c.x < -1.f || c.y < -1.f || c.z < -1.f || c.w < -1.f);
  if (m == 12345u) dx[0] = 1.f;
}
template <int U>
__global__ void __launch_bounds__(256) bwalk(const int *rp, const int *col, const float *x, const float *y, float *out, int row, int f) {
  int b = rp[row], e = rp[row + 1];
  float want = y[(long long)row * 128 + f];
  float cnt = 0;
#pragma unroll U
  for (int p = b + threadIdx.x; p < e; p += 256) {
    int nbr = __ldg(col + p);
    cnt += __ldg(x + (long long)nbr * 128 + f) == want ? 1.f : 0.f;
  }
  __shared__ float s[8];
  for (int o = 16; o; o >>= 1) cnt += __shfl_xor_sync(~0u, cnt, o);
  if ((threadIdx.x & 31) == 0) s[threadIdx.x / 32] = cnt;
  __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < 8; ++i) t += s[i]; out[0] = t; }
}
__global__ void fill(float *p, long long n) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t < n) p[t] = 0.f;
}

int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r");
  char line[256]; long long n = 0; std::vector<std::pair<int, int>> ed;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') { sscanf(line, "# nodes %lld", &n); continue; }
    int s, d; if (sscanf(line, "%d %d", &s, &d) == 2) ed.push_back({d, s});
  }
  std::sort(ed.begin(), ed.end());
  long long E = ed.size();
  std::vector<int> rp(n + 1, 0), col(E);
  for (auto &p : ed) rp[p.first + 1]++;
  for (long long i = 0; i < n; ++i) rp[i + 1] += rp[i];
  for (long long i = 0; i < E; ++i) col[i] = ed[i].second;
  std::vector<float> hx(n * F), hdy(n * F);
  std::mt19937 rng(1); std::normal_distribution<float> nd;
  struct SM { unsigned long long s; unsigned long long next() { unsigned long long z = (s += 0x9E3779B97F4A7C15ull); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31);} double u() { return (next() >> 11) * (1.0 / 9007199254740992.0);} };
  SM r1{2}, r2{0x100000001B3ull + 1};
  for (auto &v : hx) v = (float)(2.0 * r1.u() - 1.0);
  for (auto &v : hdy) v = (float)(2.0 * r2.u() - 1.0);
  int *drp, *dcol; float *x, *out, *code, *dy, *dx[4];
  CK(cudaMalloc(&drp, (n + 1) * 4)); CK(cudaMalloc(&dcol, E * 4));
  size_t bytes = n * F * 4;
  CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&out, bytes)); CK(cudaMalloc(&code, bytes)); CK(cudaMalloc(&dy, bytes));
  for (auto &p : dx) CK(cudaMalloc(&p, bytes));
  CK(cudaMemcpy(drp, rp.data(), (n + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, col.data(), E * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dy, hdy.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<int> bd(n); for (int i = 0; i < n; ++i) bd[i] = i;
  std::stable_sort(bd.begin(), bd.end(), [&](int p, int q) { return rp[p + 1] - rp[p] < rp[q + 1] - rp[q]; });
  int *dbd; CK(cudaMalloc(&dbd, n * 4)); CK(cudaMemcpy(dbd, bd.data(), n * 4, cudaMemcpyHostToDevice));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto time = [&](const char *name, auto fn) {
    std::vector<float> ts;
    for (int r = 0; r < 35; ++r) {
      cudaEventRecord(a); fn(); cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 5) ts.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    printf("%-28s %.4f ms\n", name, ts[ts.size() / 2]);
  };
  long long th = n * 32;
  time("fwd codes", [&] { fwd_codes<<<(th + 255) / 256, 256>>>(n, drp, dcol, x, out, code); });
  std::vector<float> hc(n * F); CK(cudaMemcpy(hc.data(), code, bytes, cudaMemcpyDeviceToHost));
  long long q4 = 0, q2 = 0, ties = 0, none = 0;
  for (long long i = 0; i < n * F; i += 4) {
    if (hc[i] >= 0 && hc[i] == hc[i + 1] && hc[i] == hc[i + 2] && hc[i] == hc[i + 3]) q4++;
  }
  for (long long i = 0; i < n * F; i += 2) if (hc[i] >= 0 && hc[i] == hc[i + 1]) q2++;
  for (long long i = 0; i < n * F; ++i) { float c = hc[i]; ties += c < -1.f; none += c == -1.f;
    if (c < -1.f) printf("tie at row %lld (degree %d) element %lld\n", i / F, rp[i / F + 1] - rp[i / F], i % F); }
  printf("nodes %lld edges %lld: quads agreeing %.3f, pairs agreeing %.3f, ties %lld, none %lld\n", n, E,
         q4 / (n * F / 4.0), q2 / (n * F / 2.0), ties, none);
  long long el = n * F;
  time("fill kernel", [&] { fill<<<(el + 255) / 256, 256>>>(dx[0], el); });
  time("cudaMemsetAsync", [&] { cudaMemsetAsync(dx[0], 0, bytes); });
  time("s0 scalar lane/elem", [&] { s0<<<(el + 255) / 256, 256>>>(dx[0], n, code, dy); });
  time("gen extremum_grad_0", [&] { extremum_grad_0<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  time("gen unroll16", [&] { extremum_grad_16<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  time("gen ord4", [&] { extremum_ord4<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out, dbd); });
  time("gen ord16", [&] { extremum_ord16<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out, dbd); });
  time("ties16 alone", [&] { extremum_ties<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  time("s0 then ties16", [&] { s0<<<(el + 255) / 256, 256>>>(dx[0], n, code, dy); extremum_ties<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  time("new block walks", [&] { egnew<<<(n * 4 + 7) / 8, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  time("new syncthreads_or", [&] { egor<<<(n * 4 + 7) / 8, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  time("gen extremum_grad_0 again", [&] { extremum_grad_0<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  { long long boff = 35773LL * 4 * 32 / 256; if (n <= 35773) boff = 0;
    time("iso team walk u4", [&] { iso4<<<1, 256>>>(dx[0], n, code, dy, drp, dcol, x, out, boff); });
    time("iso team walk u16", [&] { iso16<<<1, 256>>>(dx[0], n, code, dy, drp, dcol, x, out, boff); });
    time("iso block walk u1", [&] { bwalk<1><<<1, 256>>>(drp, dcol, x, out, dx[3], 35773, 76); });
    time("iso block walk u4", [&] { bwalk<4><<<1, 256>>>(drp, dcol, x, out, dx[3], 35773, 76); });
    float c; cudaMemcpy(&c, dx[3], 4, cudaMemcpyDeviceToHost); printf("matches %g\n", c);
    time("empty launch", [&] { bwalk<1><<<1, 256>>>(drp, dcol, x, out, dx[3], 0, 0); });
  }
  time("fill+gen", [&] { cudaMemsetAsync(dx[0], 0, bytes); extremum_grad_0<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[0], n, code, dy, drp, dcol, x, out); });
  time("fill+s0", [&] { cudaMemsetAsync(dx[0], 0, bytes); s0<<<(el + 255) / 256, 256>>>(dx[0], n, code, dy); });
  time("s1 float4 atomics", [&] { s1<<<(el / 4 + 255) / 256, 256>>>(dx[1], n, code, dy); });
  time("s2 float2 atomics", [&] { s2<<<(el / 2 + 255) / 256, 256>>>(dx[2], n, code, dy); });
  time("s3 float4 loads scalar atom", [&] { s3<<<(el / 4 + 255) / 256, 256>>>(dx[3], n, code, dy); });
  // Correctness: one run each from zero, compare.
  std::vector<float> r[4];
  for (int i = 0; i < 4; ++i) cudaMemset(dx[i], 0, bytes);
  s0<<<(el + 255) / 256, 256>>>(dx[0], n, code, dy);
  s1<<<(el / 4 + 255) / 256, 256>>>(dx[1], n, code, dy);
  s2<<<(el / 2 + 255) / 256, 256>>>(dx[2], n, code, dy);
  s3<<<(el / 4 + 255) / 256, 256>>>(dx[3], n, code, dy);
  for (int i = 0; i < 4; ++i) { r[i].resize(n * F); CK(cudaMemcpy(r[i].data(), dx[i], bytes, cudaMemcpyDeviceToHost)); }
  { std::vector<float> q(n * F), g(n * F);
    cudaMemset(dx[1], 0, bytes); cudaMemset(dx[2], 0, bytes);
    extremum_grad_0<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[1], n, code, dy, drp, dcol, x, out);
    extremum_ord16<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[2], n, code, dy, drp, dcol, x, out, dbd);
    CK(cudaMemcpy(g.data(), dx[1], bytes, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(q.data(), dx[2], bytes, cudaMemcpyDeviceToHost));
    double m = 0; for (long long j = 0; j < n * F; ++j) m = std::max(m, (double)fabsf(q[j] - g[j]));
    printf("ord16 vs gen max abs diff %.3g\n", m);
    cudaMemset(dx[2], 0, bytes);
    s0<<<(el + 255) / 256, 256>>>(dx[2], n, code, dy); extremum_ties<<<(n * 4 * 32 + 255) / 256, 256>>>(dx[2], n, code, dy, drp, dcol, x, out);
    CK(cudaMemcpy(q.data(), dx[2], bytes, cudaMemcpyDeviceToHost));
    m = 0; for (long long j = 0; j < n * F; ++j) m = std::max(m, (double)fabsf(q[j] - g[j]));
    printf("s0+ties vs gen max abs diff %.3g\n", m); }
  for (int i = 1; i < 4; ++i) {
    double m = 0; for (long long j = 0; j < n * F; ++j) m = std::max(m, (double)fabsf(r[i][j] - r[0][j]));
    printf("s%d vs s0 max abs diff %.3g\n", i, m);
  }
  return 0;
}
