//===- Sampling.h - neighbour sampling on the device --------------*- C++
//-*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Device kernels of the neighbour loader (python/gnnc/loader.py): what
/// would otherwise be a loop of small PyTorch launches per sampled hop.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_SAMPLING_H
#define GNN_RUNTIME_SAMPLING_H

#include "gnn/Runtime/Status.h"

#include <cstdint>

typedef struct CUstream_st *cudaStream_t;

namespace gnn {
namespace runtime {

/// For each of `rows` rows of degree deg[r] > k (device memory), k distinct
/// offsets in [0, deg[r]) written to out[r * k, r * k + k): a uniform random
/// k-subset by Floyd's algorithm, one thread per row, with the draws of
/// gnn/Runtime/Floyd.h (the CPU operator's: the same subsets) keyed by the
/// 64-bit *seed, which is read on the device. Enqueued on `stream`; k >= 1.
Status chooseSubsets(const int64_t *deg, int64_t rows, int64_t k,
                     const int64_t *seed, int64_t *out, cudaStream_t stream);

/// out[i, :] = table[index[i], :] for `count` int64 ids on the device, rows
/// of `rowBytes` bytes: the loader's gathers from a graph or features kept
/// in pinned host memory (read over the bus through unified addressing, a
/// warp per row) or on the device. An id outside [0, rows) gives a zero row
/// (the loader's ids never are). Enqueued on `stream`; fails when `table`
/// is pageable host memory.
Status gatherRows(const void *table, int64_t rows, int64_t rowBytes,
                  const int64_t *index, int64_t count, void *out,
                  cudaStream_t stream);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_SAMPLING_H
