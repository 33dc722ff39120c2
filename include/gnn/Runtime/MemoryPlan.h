//===- MemoryPlan.h - temporaries placed in one arena by liveness -*- C++ -*-===//
//
// Part of gnnc. No MLIR, no CUDA: plans are computed and tested on any host.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A Program's temporaries share one device arena (the workspace). Each temp
/// is live from the first to the last step that names it (a kernel argument,
/// an SpMM's input, output or weights, a GEMM's operands, a fill, a copy's
/// source or destination); two temps may share bytes only when one's last
/// step is strictly before the other's first, so a step never reads and
/// writes two temps that overlap in memory (no in-place hazard). Steps run in
/// order on one stream, which is what makes reuse after the last use safe.
///
/// Sizes are formulas of the graph's sizes, so a plan is made per graph size
/// (`planMemory(program, scope)`), when an Executable is bound to a graph.
/// The placement is the smallest of three greedy placements, each putting
/// the blocks one at a time into a gap between the blocks already placed
/// whose live ranges overlap its own: (1) largest first (ties: earlier first
/// step), in the smallest gap that fits, else above them all (TFLite's
/// GreedyBySize); (2) in program order (by first step), likewise; (3) in
/// program order, under the bound maxLiveBytes, at the lowest fitting offset
/// for the 1st, 3rd, ... block and the highest for the 2nd, 4th, ... (kept
/// only when everything fits), which reaches the bound on chains of
/// temporaries whatever their sizes, where (1) may not. Offsets and sizes are
/// rounded up to `kArenaAlignment`. The result is deterministic.
///
/// Like the other planners, `planArena` has `checkMemoryBlocks()` for its
/// input and `verifyArenaPlan()` for its answer.
///
/// Before the arena, temps may be placed inside an output: an output holds
/// nothing until the first step that names it, so a temp whose last step
/// is strictly before that one can live in the output's bytes (largest
/// temps first, each into the first output, in buffer order, where it fits
/// beside the temps already there that are live with it, at a multiple of
/// kArenaAlignment). The arena then holds the rest (the placement is kept
/// only when that arena is no larger than all temps' would be). GATv2's
/// backward keeps its `D_v` in the key-side gradient until the last passes
/// write it, for instance. Executable::run requires such an output to be
/// 16-byte aligned and to share no byte with an input.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_MEMORYPLAN_H
#define GNN_RUNTIME_MEMORYPLAN_H

#include "gnn/Runtime/Program.h"

#include <cstddef>
#include <string>
#include <vector>

namespace gnn {
namespace runtime {

/// Every arena offset (and so every temp's address, given an arena aligned
/// at least as much) is a multiple of this.
constexpr size_t kArenaAlignment = 256;

/// Bytes of one element of `t`: 2 for bf16 and f16, 4 for f32 and i32, 8
/// otherwise (i64, f64).
size_t elementBytes(DType t);

/// The element count of `buffer` at `scope`'s sizes; an error naming the
/// buffer when its formula fails or is negative.
StatusOr<int64_t> bufferElements(const BufferDecl &buffer,
                                 const FormulaScope &scope);

/// The bytes of `buffer` at `scope`'s sizes (bufferElements times the
/// element size); an error naming the buffer beyond 2^63 bytes.
StatusOr<int64_t> bufferBytes(const BufferDecl &buffer,
                              const FormulaScope &scope);

/// A block to place: its size and the steps [first, last] (inclusive) during
/// which it holds its contents.
struct MemoryBlock {
  size_t bytes = 0;
  size_t first = 0, last = 0;
};

/// An offset per block and the arena size.
struct ArenaPlan {
  std::vector<size_t> offsets;
  size_t arenaBytes = 0;
};

/// `first <= last` for every block, and no size so large that rounding it up
/// overflows.
Status checkMemoryBlocks(const std::vector<MemoryBlock> &blocks,
                         size_t alignment = kArenaAlignment);

/// Places `blocks` (which must pass checkMemoryBlocks) as described above.
/// The arena is never larger than the sum of the rounded sizes.
/// Blocks of 0 bytes get offset 0 and take no space.
ArenaPlan planArena(const std::vector<MemoryBlock> &blocks,
                    size_t alignment = kArenaAlignment);

/// Every offset is aligned, every block lies inside the arena, and no two
/// blocks whose live ranges share a step share a byte.
Status verifyArenaPlan(const std::vector<MemoryBlock> &blocks,
                       const ArenaPlan &plan,
                       size_t alignment = kArenaAlignment);

/// The largest total of (aligned) block sizes live at one step: no plan can
/// use less arena than this.
size_t maxLiveBytes(const std::vector<MemoryBlock> &blocks,
                    size_t alignment = kArenaAlignment);

/// The steps that name a buffer, per buffer of `program` (in its order):
/// `used` is false for a buffer no step names.
struct LiveRange {
  bool used = false;
  size_t first = 0, last = 0;
};
std::vector<LiveRange> bufferLiveRanges(const Program &program);

/// The memory plan of a Program at one graph size.
struct MemoryPlan {
  struct Temp {
    size_t buffer = 0; ///< index in Program::buffers
    size_t bytes = 0;  ///< elements * element size (not rounded)
    LiveRange range;   ///< an unused temp gets no bytes of the arena
    size_t offset = 0; ///< in the arena, or in `host`
    /// The output (index in Program::buffers) whose bytes hold the temp
    /// before the output is written, or kArena.
    size_t host = kArena;
    static constexpr size_t kArena = SIZE_MAX;
  };
  /// The temps, in the Program's buffer order.
  std::vector<Temp> temps;
  /// Bytes the workspace needs (a multiple of kArenaAlignment).
  size_t arenaBytes = 0;
  /// What one allocation per temp costs (the sum of the temps' bytes), the
  /// figure before planning.
  size_t unplannedBytes = 0;
  /// maxLiveBytes of the temps: the lower bound of an arena holding them
  /// all (arenaBytes is below it when outputs hold some).
  size_t maxLiveBytes = 0;

  /// JSON: {"arena_bytes", "unplanned_bytes", "max_live_bytes", "alignment",
  /// "temps": [{"name", "bytes", "first_step", "last_step", "offset",
  /// "in"}]} ("in": "arena" or the output holding it; an unused temp has
  /// null steps, offset and "in").
  std::string toJson(const Program &program) const;
};

/// Evaluates the temps' sizes at `scope`, computes their live ranges and
/// places them (checked and verified). Errors: a size that does not
/// evaluate, is negative or overflows.
StatusOr<MemoryPlan> planMemory(const Program &program,
                                const FormulaScope &scope);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_MEMORYPLAN_H
