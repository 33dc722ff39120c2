// How gemmRowSplit's time depends on its slice count (`chunks`): the
// weight-gradient GEMM C = A^T B of GINE's layers (35,970 x 64 x 64, with
// and without A's column sums; the edge projection's 76,008 x 64 x 4) and
// two larger ones, for the slice counts ProgramLowering's formula gives
// (rows in slices of at least 256, at most 256 / tiles slices) and others,
// against the SM count. Median of 50 runs (CUDA events), us.
// Built from the repository root after scripts/build.sh (the runtime's
// static libraries):
//   nvcc -O3 -arch=sm_90 -std=c++17 -I include bench/probes/atb/chunks.cu \
//     -Xlinker --start-group build/lib/Runtime/libGNNRuntime.a \
//     build/lib/Runtime/libGNNProgram.a build/lib/Graph/libGNNGraph.a \
//     build/lib/Tensor/libGNNTensor.a build/lib/Analysis/libGNNAnalysis.a \
//     -Xlinker --end-group -lcusparse -lcublasLt -lcublas -lcuda -lz -o chunks
#include "gnn/Runtime/Library.h"

#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

using gnn::runtime::gemmRowSplit;

static float timeIt(int64_t m, int64_t n, int64_t k, int64_t chunks,
                    bool sums) {
  float *a, *b, *c, *rs;
  double *partials;
  cudaMalloc(&a, k * m * 4);
  cudaMalloc(&b, k * n * 4);
  cudaMalloc(&c, m * n * 4);
  cudaMalloc(&rs, m * 4);
  cudaMalloc(&partials, chunks * (m * n + m) * 8);
  cudaMemset(a, 0, k * m * 4);
  cudaMemset(b, 0, k * n * 4);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> t;
  for (int i = 0; i < 60; ++i) {
    cudaEventRecord(e0);
    gnn::runtime::Status st = gemmRowSplit(m, n, k, chunks, 1.0, a, b, 0.0, c,
                                           partials, 0, sums ? rs : nullptr);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    if (!st.ok()) {
      std::printf("error: %s\n", st.message().c_str());
      return -1;
    }
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i >= 10)
      t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(rs), cudaFree(partials);
  return t[t.size() / 2];
}

int main() {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("%s, %d SMs; us, median of 50\n", p.name, p.multiProcessorCount);
  struct Case {
    int64_t m, n, k;
    bool sums;
  } cases[] = {{64, 64, 35970, true},   {64, 64, 35970, false},
               {4, 64, 76008, false},   {64, 64, 300000, false},
               {128, 128, 232965, false}, {64, 64, 10000, false}};
  int sm = p.multiProcessorCount;
  for (const Case &cs : cases) {
    int64_t tiles = (cs.m + 63) / 64 * ((cs.n + 63) / 64);
    int64_t formula = std::max<int64_t>(
        std::min<int64_t>((cs.k + 255) / 256, std::max<int64_t>(1, 256 / tiles)),
        1);
    std::printf("%lld x %lld x %lld%s (formula: %lld slices)\n", (long long)cs.k,
                (long long)cs.m, (long long)cs.n, cs.sums ? " +sums" : "",
                (long long)formula);
    std::vector<int64_t> counts = {formula, int64_t(sm), 2 * int64_t(sm), 256,
                                   3 * int64_t(sm), 4 * int64_t(sm)};
    for (int64_t c : {int64_t(64), int64_t(96), int64_t(141)})
      counts.push_back(c);
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    for (int64_t c : counts) {
      if (c < 1 || c > 65535 || c > cs.k)
        continue;
      std::printf("  %5lld slices (%4lld rows each): %7.1f\n", (long long)c,
                  (long long)((cs.k + c - 1) / c), timeIt(cs.m, cs.n, cs.k, c, cs.sums));
    }
  }
  return 0;
}
