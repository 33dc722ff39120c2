//===- Floyd.h - uniform random k-subsets, host and device -------*- C++
//-*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The neighbour loader's subset draw, one row at a time, the same on the
/// host (the CPU operator) and on the device (lib/Runtime/Sampling.cu): for
/// a row of degree d > k, k distinct offsets in [0, d) by Floyd's algorithm
/// (for J = d - k .. d - 1, draw t in [0, J] and take t, or J if t is taken
/// already; every k-subset is equally likely). The draws are counter-based,
/// Philox-4x32-10 keyed by a 64-bit seed and counting by (row, step), so the
/// result depends on the seed, the row, its degree and k only: the CPU and
/// the GPU give the same subsets. A uniform integer in [0, J] comes from a
/// 53-bit fraction (bias below (J + 1) / 2^53).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_FLOYD_H
#define GNN_RUNTIME_FLOYD_H

#include <cstdint>

#if defined(__CUDACC__)
#define GNN_FLOYD_FN __host__ __device__ inline
#else
#define GNN_FLOYD_FN inline
#endif

namespace gnn {
namespace runtime {
namespace floyd {

/// Philox-4x32-10 (Salmon et al., SC'11) of counter c under key (k0, k1).
GNN_FLOYD_FN void philox(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

/// A uniform integer in [0, top] for step j of row r.
GNN_FLOYD_FN int64_t draw(uint64_t seed, int64_t r, int64_t j, int64_t top) {
  uint32_t c[4] = {uint32_t(uint64_t(j)), uint32_t(uint64_t(j) >> 32),
                   uint32_t(uint64_t(r)), uint32_t(uint64_t(r) >> 32)};
  philox(c, uint32_t(seed), uint32_t(seed >> 32));
  uint64_t m = (uint64_t(c[0]) << 21) ^ (c[1] >> 11); // 53 random bits
  double u = double(m) * (1.0 / 9007199254740992.0);
  int64_t t = int64_t(u * double(top + 1));
  return t < top ? t : top;
}

/// Row r's k offsets (d > k) into chosen[0, k).
GNN_FLOYD_FN void chooseRow(uint64_t seed, int64_t r, int64_t d, int64_t k,
                            int64_t *chosen) {
  for (int64_t j = 0; j < k; ++j) {
    int64_t top = d - k + j;
    int64_t t = draw(seed, r, j, top);
    bool taken = false;
    for (int64_t i = 0; i < j; ++i)
      taken |= chosen[i] == t;
    chosen[j] = taken ? top : t;
  }
}

} // namespace floyd
} // namespace runtime
} // namespace gnn

#undef GNN_FLOYD_FN

#endif // GNN_RUNTIME_FLOYD_H
