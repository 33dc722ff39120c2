//===- Tuner.h - timing schedule candidates on the real graph ----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The autotuner: on first use of (function, statistics bucket, shapes,
/// device), it compiles the function with each candidate heavy-row
/// threshold, times each on the real graph and inputs within a budget, and
/// records the winner in the disk cache beside the kernels
/// (`<GNNC_CACHE_DIR>/<key>.tune`, written atomically, versioned by the
/// key); later uses read it back. `GNNC_AUTOTUNE=off|on|exhaustive` (default
/// off: the cost model's choice, gnn::chooseSplit); `on` times the model's
/// choice and its neighbours (32 to 512), `exhaustive` every threshold from
/// none to 2048; `GNNC_AUTOTUNE_BUDGET_S` bounds the time (default 2 s).
///
/// The knob is the `split` of every aggregation and attention kernel of the
/// function (CompileOptions::split); the rest of the schedule is the
/// model's. Tuning writes the outputs' buffers (the caller's run comes
/// after it).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_COMPILER_TUNER_H
#define GNN_COMPILER_TUNER_H

#include "gnn/Compiler/Driver.h"
#include "gnn/Runtime/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
namespace gnn {

enum class AutotuneMode { Off, On, Exhaustive };

struct TuneOptions {
  AutotuneMode mode = AutotuneMode::Off;
  /// Wall time for compiling and timing candidates (the model's choice is
  /// always timed first, and a candidate started is finished).
  double budgetSeconds = 2.0;
  int warmup = 2, reps = 5;
  /// Target (empty: the device's).
  std::string arch;
};

/// The options from GNNC_AUTOTUNE and GNNC_AUTOTUNE_BUDGET_S; an error names
/// the variable and the value.
::gnn::runtime::StatusOr<TuneOptions> tuneOptionsFromEnvironment();

/// The thresholds a mode tries, the model's choice (-1) first.
std::vector<int64_t> splitCandidates(AutotuneMode mode);

struct TuneResult {
  /// The threshold to compile with: -1 for the model's.
  int64_t split = -1;
  /// "model" (not tuned), "tuner" (timed now) or "cache".
  std::string source = "model";
  /// Wall time spent tuning, compiles included.
  double tuneMs = 0;
  /// Median ms of each candidate timed (tuner) or recorded (cache).
  std::vector<std::pair<int64_t, double>> timings;
};

/// Tunes `func` of `module` (graph-level IR; neither is changed) for
/// `graph`, running with `bindings` (every input and output buffer of the
/// function's Program) on `stream`. Nothing to tune (mode off, or no row
/// longer than 32 edges) answers the model's choice.
::gnn::runtime::StatusOr<TuneResult>
tuneSplit(ModuleOp module, func::FuncOp func, const CompileOptions &options,
          const ::gnn::runtime::Graph &graph,
          const std::map<std::string, void *> &bindings, cudaStream_t stream,
          const TuneOptions &tune);

} // namespace gnn
} // namespace mlir

#endif // GNN_COMPILER_TUNER_H
