//===- gnn_device.cuh - device building blocks for generated kernels -------===//
//
// Part of gnnc. Compiled by NVRTC together with every generated kernel, as
// `#include "gnn_device.cuh"`. Self-contained: no CUDA runtime headers.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DEVICE_CUH
#define GNN_DEVICE_CUH

namespace gnn {

constexpr unsigned kFullMask = 0xffffffffu;

//===----------------------------------------------------------------------===//
// Warp and block reductions
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

/// Maximum and minimum that propagate NaN (torch.amax's, unlike fmaxf,
/// which drops it): one compare more than a plain select.
__device__ __forceinline__ float nanMax(float a, float b) {
  return (a > b || a != a) ? a : b;
}
__device__ __forceinline__ float nanMin(float a, float b) {
  return (a < b || a != a) ? a : b;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = nanMax(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

__device__ __forceinline__ float warpMin(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = nanMin(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

/// Sum over a block of up to 1024 threads; `scratch` holds 32 floats. Every
/// thread gets the result.
__device__ __forceinline__ float blockSum(float v, float *scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpSum(v);
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = lane < warps ? scratch[lane] : 0.0f;
  v = warpSum(v);
  __syncthreads();
  return v;
}

/// Maximum over a block; `scratch` holds 32 floats.
__device__ __forceinline__ float blockMax(float v, float *scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpMax(v);
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = lane < warps ? scratch[lane] : -__int_as_float(0x7f800000);
  v = warpMax(v);
  __syncthreads();
  return v;
}

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

/// Running maximum and normaliser of a softmax over a stream of scores:
/// after all updates, weight(s) = exp(s - max) / sum.
struct OnlineSoftmax {
  float max = -__int_as_float(0x7f800000);
  float sum = 0.0f;

  /// Adds score `s`; returns the factor by which earlier partial results
  /// (weighted by exp(s' - old max)) must be rescaled.
  __device__ __forceinline__ float add(float s) {
    float m = nanMax(max, s);
    float scale = (max == m) ? 1.0f : __expf(max - m);
    sum = sum * scale + __expf(s - m);
    max = m;
    return scale;
  }

  /// Merges another partial state (e.g. from another lane).
  __device__ __forceinline__ void merge(const OnlineSoftmax &o) {
    float m = nanMax(max, o.max);
    if (m == -__int_as_float(0x7f800000))
      return;
    sum = sum * __expf(max - m) + o.sum * __expf(o.max - m);
    max = m;
  }

  /// log-sum-exp, the residual saved for backward.
  __device__ __forceinline__ float logSumExp() const { return max + __logf(sum); }
};

//===----------------------------------------------------------------------===//
// Vectorised row access
//===----------------------------------------------------------------------===//

/// Loads 4 consecutive floats from a 16-byte aligned address, read-only path.
__device__ __forceinline__ float4 load4(const float *p) {
  return __ldg(reinterpret_cast<const float4 *>(p));
}

__device__ __forceinline__ void store4(float *p, float4 v) {
  *reinterpret_cast<float4 *>(p) = v;
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

/// Float atomic maximum through compare-and-swap (correct for all values,
/// including negatives; a NaN, stored or given, stays); returns the old
/// value.
__device__ __forceinline__ float atomicMaxFloat(float *addr, float v) {
  int *a = reinterpret_cast<int *>(addr);
  int old = *a, assumed;
  do {
    assumed = old;
    const float cur = __int_as_float(assumed);
    if (cur != cur || cur >= v)
      break;
    old = atomicCAS(a, assumed, __float_as_int(v));
  } while (assumed != old);
  return __int_as_float(old);
}

__device__ __forceinline__ float atomicMinFloat(float *addr, float v) {
  int *a = reinterpret_cast<int *>(addr);
  int old = *a, assumed;
  do {
    assumed = old;
    const float cur = __int_as_float(assumed);
    if (cur != cur || cur <= v)
      break;
    old = atomicCAS(a, assumed, __float_as_int(v));
  } while (assumed != old);
  return __int_as_float(old);
}

} // namespace gnn

#endif // GNN_DEVICE_CUH
