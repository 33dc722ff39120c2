//===- HalfFloat.h - bf16 and f16 rounding on the host ----------*- C++ -*-===//
//
// Part of gnnc. Header-only, no MLIR and no CUDA: shared by the reference
// evaluator, the runtime, gnn-run and the Python extension.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The storage types bf16 (8 significand bits, f32's exponent range) and
/// IEEE f16 (11 significand bits, largest finite 65504): rounding a double
/// to the nearest representable value (ties to even, overflow to infinity,
/// NaN kept), and their bit patterns. Rounding is done once, from the
/// double, never through f32 (no double rounding).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TENSOR_HALFFLOAT_H
#define GNN_TENSOR_HALFFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace gnn {

/// The two half-precision storage types.
enum class HalfKind { BF16, F16 };

namespace detail {
/// `x` rounded to `p` significand bits with least normal exponent `emin`
/// (subnormals below it) and largest finite `maxFinite`, ties to even.
inline double roundToFormat(double x, int p, int emin, double maxFinite) {
  if (!std::isfinite(x) || x == 0.0)
    return x;
  int e = 0;
  std::frexp(x, &e); // |x| in [2^(e-1), 2^e)
  int lead = e - 1 < emin ? emin : e - 1;
  double quantum = std::ldexp(1.0, lead - (p - 1));
  double q = x / quantum; // exact: a power-of-two scaling
  // Nearest integer, ties to even (independent of the rounding mode).
  double r = std::trunc(q), frac = std::fabs(q - r);
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0))
    r += q > 0 ? 1.0 : -1.0;
  r *= quantum;
  if (std::fabs(r) > maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}
} // namespace detail

/// `x` rounded to the nearest value of `kind` (ties to even), as a double.
inline double roundToHalf(double x, HalfKind kind) {
  if (kind == HalfKind::BF16)
    return detail::roundToFormat(x, 8, -126, 0x1.fep127);
  return detail::roundToFormat(x, 11, -14, 65504.0);
}

/// The bits of `x` rounded to `kind`.
inline uint16_t halfBits(double x, HalfKind kind) {
  double r = roundToHalf(x, kind);
  if (kind == HalfKind::BF16) {
    float f = static_cast<float>(r); // exact: bf16 values are floats
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(r))
      return static_cast<uint16_t>((u >> 16) | 0x40u);
    return static_cast<uint16_t>(u >> 16);
  }
  uint16_t sign = std::signbit(r) ? 0x8000u : 0u;
  if (std::isnan(r))
    return sign | 0x7e00u;
  double a = std::fabs(r);
  if (std::isinf(a))
    return sign | 0x7c00u;
  if (a < 0x1p-14) // subnormal (or zero): a multiple of 2^-24
    return sign | static_cast<uint16_t>(a * 0x1p24);
  int e = 0;
  double m = std::frexp(a, &e); // a = m 2^e, m in [0.5, 1)
  uint16_t exponent = static_cast<uint16_t>(e - 1 + 15);
  uint16_t mantissa = static_cast<uint16_t>((m * 2.0 - 1.0) * 1024.0);
  return sign | static_cast<uint16_t>(exponent << 10) | mantissa;
}

/// The value of the bits `bits` of `kind`.
inline double halfValue(uint16_t bits, HalfKind kind) {
  if (kind == HalfKind::BF16) {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  unsigned exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0)
    return sign * std::ldexp(static_cast<double>(mantissa), -24);
  if (exponent == 31)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  return sign *
         std::ldexp(1.0 + mantissa / 1024.0, static_cast<int>(exponent) - 15);
}

} // namespace gnn

#endif // GNN_TENSOR_HALFFLOAT_H
