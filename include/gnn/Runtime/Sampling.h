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

#include <cstddef>

#include <cstdint>

typedef struct CUstream_st *cudaStream_t;

namespace gnn {
namespace runtime {

/// One hop of the neighbour loader, in two calls around the one read back
/// of its size. `indptr` ([numNodes + 1], device memory or pinned host
/// memory read through unified addressing) holds the in-edges' CSC offsets;
/// `frontier` ([rows] node ids, device memory) the nodes whose in-edges are
/// sampled: all of them (k = -1), k uniform draws with replacement
/// (`replace`), or k distinct ones by Floyd's algorithm (gnn/Runtime/Floyd.h,
/// the CPU operator's draws: the same edges for the same seed). The draws
/// are keyed by the 64-bit *seed (read on the device) and the frontier
/// position.
///
/// sampleHopCount writes each frontier node's sample count, their inclusive
/// sum into ends[rows] (cub, `temp` of sampleHopTempBytes(rows) bytes) and,
/// at *flag, the first frontier position whose id lies outside
/// [0, numNodes) or whose offsets decrease (above every position: none;
/// the function sets it before the kernel). sampleHopFill must not run
/// after a flagged count. Enqueued on `stream`.
size_t sampleHopTempBytes(int64_t rows);
Status sampleHopCount(const int64_t *indptr, int64_t numNodes,
                      const int64_t *frontier, int64_t rows, int64_t k,
                      bool replace, int64_t *counts, int64_t *ends,
                      int64_t *flag, void *temp, cudaStream_t stream);

/// sampleHopFill, once the total (ends[rows - 1]) is known: for each of the
/// `total` samples its CSC position pos[s] and its frontier position
/// owner[s], grouped by frontier position. Enqueued on `stream`.
Status sampleHopFill(const int64_t *indptr, const int64_t *frontier,
                     int64_t rows, int64_t k, bool replace, const int64_t *seed,
                     const int64_t *counts, const int64_t *ends, int64_t total,
                     int64_t *pos, int64_t *owner, cudaStream_t stream);

/// The loader's relabelling of a hop's `count` sampled sources `src` (global
/// ids, device memory), in two calls around the read back of the new node
/// count. `localMap` (global id -> local id, -1: not in the batch yet) and
/// `firstMap` (global id -> first position among the sources, INT64_MAX
/// between calls) cover every node. relabelMark leaves in flags[s] whether
/// position s is a new node's first occurrence and their running count in
/// `ranks` (exclusive; both of count + 1 entries, so that ranks[count] is
/// the new node count; `temp` of relabelTempBytes(count + 1) bytes for
/// cub), and at *bad the first position whose id lies outside [0,
/// numNodes) (INT64_MAX-like: none), which relabelAssign must not see.
/// relabelAssign then gives the new nodes the local ids numLocal,
/// numLocal + 1, ... in order of first occurrence, writes every position's
/// local id to local[count], the new nodes' global ids to newNodes, enters
/// them in localMap and resets firstMap.
size_t relabelTempBytes(int64_t count);
Status relabelMark(const int64_t *src, int64_t count, int64_t numNodes,
                   const int64_t *localMap, int64_t *firstMap, int64_t *flags,
                   int64_t *ranks, int64_t *bad, void *temp,
                   cudaStream_t stream);
Status relabelAssign(const int64_t *src, int64_t count, int64_t numLocal,
                     const int64_t *flags, const int64_t *ranks, int64_t numNew,
                     int64_t *localMap, int64_t *firstMap, int64_t *local,
                     int64_t *newNodes, cudaStream_t stream);

/// Copies `bytes` from device memory to the host after the work queued on
/// `stream` and waits for them.
Status readBack(void *host, const void *device, size_t bytes,
                cudaStream_t stream);

/// The device address of `p` (device memory, or pinned host memory through
/// unified addressing); an error for pageable host memory.
StatusOr<const void *> deviceView(const void *p, const char *what);

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
