//===- gnn_device.cuh - the device helpers generated kernels call ---------===//
//
// Part of gnnc. Compiled by NVRTC together with every generated kernel, as
// `#include "gnn_device.cuh"` in the prelude the CUDA printer writes
// (lib/Target/CUDA/CUDAPrinter.cpp); the one copy of these helpers. Holds only
// what the printer's kernels call. Self-contained: no CUDA runtime headers.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DEVICE_CUH
#define GNN_DEVICE_CUH

// arith.maximumf / arith.minimumf: NaN if either operand is NaN, and
// -0.0 < +0.0. Branch-free, since they sit in the max/min aggregations' edge
// loops. From sm_80, PTX's max.NaN / min.NaN are exactly that in one
// instruction (measured on an H200: max(+0, -0) = max(-0, +0) = +0,
// min = -0, either order). Before, a zero result takes its sign from both
// operands' signs (AND for the maximum, OR for the minimum).
__device__ __forceinline__ float gnn_maximumf(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  float r = (a != a || b != b) ? a + b : fmaxf(a, b);
  return r == 0.0f ? __int_as_float(__float_as_int(a) & __float_as_int(b) &
                                    (int)0x80000000u)
                   : r;
#endif
}
__device__ __forceinline__ float gnn_minimumf(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  float r = (a != a || b != b) ? a + b : fminf(a, b);
  return r == 0.0f ? __int_as_float((__float_as_int(a) | __float_as_int(b)) &
                                    (int)0x80000000u)
                   : r;
#endif
}
__device__ __forceinline__ double gnn_maximumf(double a, double b) {
  double r = (a != a || b != b) ? a + b : fmax(a, b);
  return r == 0.0 ? __longlong_as_double(__double_as_longlong(a) &
                                         __double_as_longlong(b) &
                                         (long long)0x8000000000000000ull)
                  : r;
}
__device__ __forceinline__ double gnn_minimumf(double a, double b) {
  double r = (a != a || b != b) ? a + b : fmin(a, b);
  return r == 0.0 ? __longlong_as_double((__double_as_longlong(a) |
                                          __double_as_longlong(b)) &
                                         (long long)0x8000000000000000ull)
                  : r;
}

// arith.ceildivsi / floordivsi / ceildivui: divisions rounding up or down.
__device__ __forceinline__ int gnn_ceildivsi(int a, int b) {
  const int q = a / b, r = a % b;
  return (r != 0 && ((r < 0) == (b < 0))) ? q + 1 : q;
}
__device__ __forceinline__ long long gnn_ceildivsi(long long a, long long b) {
  const long long q = a / b, r = a % b;
  return (r != 0 && ((r < 0) == (b < 0))) ? q + 1 : q;
}
__device__ __forceinline__ int gnn_floordivsi(int a, int b) {
  const int q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long gnn_floordivsi(long long a, long long b) {
  const long long q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ unsigned gnn_ceildivui(unsigned a, unsigned b) {
  return a / b + (a % b != 0u ? 1u : 0u);
}
__device__ __forceinline__ unsigned long long
gnn_ceildivui(unsigned long long a, unsigned long long b) {
  return a / b + (a % b != 0ull ? 1ull : 0ull);
}

// bf16 and f16 storage (kernels compute in f32: loads widen, stores round
// to nearest even). Own types holding the bits, so that no CUDA header is
// needed; one 32-bit word holds two consecutive elements, the first in its
// low half (little-endian), as 16-byte vector accesses of 8 read them.
struct __align__(2) gnn_bf16 {
  unsigned short bits;
};
struct __align__(2) gnn_f16 {
  unsigned short bits;
};
__device__ __forceinline__ gnn_bf16 gnn_ldg(const gnn_bf16 *p) {
  return gnn_bf16{__ldg(reinterpret_cast<const unsigned short *>(p))};
}
__device__ __forceinline__ gnn_f16 gnn_ldg(const gnn_f16 *p) {
  return gnn_f16{__ldg(reinterpret_cast<const unsigned short *>(p))};
}
// Widening is exact: a bf16 is the high half of an f32.
__device__ __forceinline__ float gnn_widen(gnn_bf16 x) {
  return __uint_as_float((unsigned)x.bits << 16);
}
__device__ __forceinline__ float gnn_widen(gnn_f16 x) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(x.bits));
  return r;
}
__device__ __forceinline__ gnn_bf16 gnn_round_bf16(float x) {
#if __CUDA_ARCH__ >= 800
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return gnn_bf16{r};
#else
  const unsigned u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet
    return gnn_bf16{(unsigned short)((u >> 16) | 0x40u)};
  return gnn_bf16{(unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
#endif
}
__device__ __forceinline__ gnn_f16 gnn_round_f16(float x) {
  unsigned short r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return gnn_f16{r};
}
// Two elements of one 32-bit word, and back.
__device__ __forceinline__ float2 gnn_widen2_bf16(unsigned w) {
  return make_float2(__uint_as_float(w << 16),
                     __uint_as_float(w & 0xffff0000u));
}
__device__ __forceinline__ float2 gnn_widen2_f16(unsigned w) {
  return make_float2(gnn_widen(gnn_f16{(unsigned short)(w & 0xffffu)}),
                     gnn_widen(gnn_f16{(unsigned short)(w >> 16)}));
}
__device__ __forceinline__ unsigned gnn_round2_bf16(float a, float b) {
  return (unsigned)gnn_round_bf16(a).bits |
         ((unsigned)gnn_round_bf16(b).bits << 16);
}
__device__ __forceinline__ unsigned gnn_round2_f16(float a, float b) {
  return (unsigned)gnn_round_f16(a).bits |
         ((unsigned)gnn_round_f16(b).bits << 16);
}

// The lanes of the aligned segment of `width` lanes (a power of two) of the
// warp that holds this thread: the mask of gnnk.team_reduce's shuffles.
__device__ __forceinline__ unsigned gnn_segment_mask(unsigned width) {
  return width == 32u ? 0xffffffffu
                      : (((1u << width) - 1u)
                         << ((threadIdx.x & 31u) & ~(width - 1u)));
}

#endif // GNN_DEVICE_CUH
