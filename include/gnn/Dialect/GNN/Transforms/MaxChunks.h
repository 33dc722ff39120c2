//===- MaxChunks.h - the max-chunks option, declared once ---------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The most chunks of a split heavy-row kernel (blocks of its partial and
/// final kernels, and partial results): the `max-chunks` option of
/// gnn-split-heavy-rows, the pipelines, gnn-translate and gnn-run. Its
/// default and bounds are declared here only; the passes' TableGen option
/// (MaxChunksOption.td) takes its default from here too. Plain constants,
/// no MLIR.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_MAXCHUNKS_H
#define GNN_DIALECT_GNN_TRANSFORMS_MAXCHUNKS_H

#include <cstdint>
#include <string>

namespace mlir {
namespace gnn {

/// The default: 8192 chunks (a split covers 256 × 8192 = 2M edges in chunks
/// of the smallest split before its chunks grow).
constexpr int64_t kDefaultMaxChunks = 8192;
/// The bounds: at least one chunk, at most a 32-bit grid's count.
constexpr int64_t kLeastMaxChunks = 1;
constexpr int64_t kMostMaxChunks = (int64_t(1) << 31) - 1;

/// The diagnostic for `maxChunks` out of bounds, or "" within them.
inline std::string checkMaxChunks(int64_t maxChunks) {
  if (maxChunks >= kLeastMaxChunks && maxChunks <= kMostMaxChunks)
    return "";
  return "expects max-chunks between " + std::to_string(kLeastMaxChunks) +
         " and " + std::to_string(kMostMaxChunks) + " but got " +
         std::to_string(maxChunks);
}

} // namespace gnn
} // namespace mlir

#endif // GNN_DIALECT_GNN_TRANSFORMS_MAXCHUNKS_H
