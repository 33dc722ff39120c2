//===- DeviceBytes.h - device memory of a graph and a Program ---*- C++ -*-===//
//
// Part of gnnc. No CUDA: computed on the host from sizes alone.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What running a Program on a graph takes in device memory, computed before
/// anything is allocated, so that a tool refuses a graph too large for the
/// device with a message naming its nodes, edges and the bytes (needed and
/// free) instead of failing in the middle of a run. The graph's bytes follow
/// Graph::fromHost (lib/Runtime/Graph.cu): the arrays it keeps, and its peak
/// while building (the uploaded edge lists, the sort keys and CUB's
/// temporaries besides). Every figure is checked for int64 overflow.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_DEVICEBYTES_H
#define GNN_RUNTIME_DEVICEBYTES_H

#include "gnn/Runtime/Program.h"
#include "gnn/Runtime/TrainingProgram.h"

#include <cstdint>
#include <string>

namespace gnn {
namespace runtime {

/// Device bytes of a graph built by Graph::fromHost.
struct GraphDeviceBytes {
  /// The arrays the graph keeps: CSR (row pointer, columns, edge ids,
  /// destinations), CSC (column pointer, rows, edge ids), the CSC-to-CSR
  /// permutation, in- and out-degrees.
  int64_t kept = 0;
  /// The most held at once while building: the kept arrays, the uploaded
  /// 64-bit edge lists (and batch vector), the 64-bit sort keys twice, the
  /// sort's values and CUB's temporary storage.
  int64_t peak = 0;
};

/// The device bytes of a graph of `nodes` and `edges` with `indexBits`-bit
/// (32 or 64) index arrays, with a batch vector when `batch`, with edge
/// types (`csr_type`, one index per edge; set after the build from an
/// uploaded int64 list) when `typed`. Fails when a figure exceeds int64 or
/// a size is negative.
StatusOr<GraphDeviceBytes> graphDeviceBytes(int64_t nodes, int64_t edges,
                                            int indexBits, bool batch,
                                            bool typed = false);

/// Device bytes of a Program's buffers by role (element counts from the
/// buffers' size formulas times their element sizes).
struct ProgramDeviceBytes {
  int64_t inputs = 0, outputs = 0;
  /// The temporaries one allocation each (the figure before planning).
  int64_t temps = 0;
  /// The workspace the temporaries share: the arena of the memory plan at
  /// the graph's sizes (MemoryPlan.h), what a run allocates.
  int64_t workspace = 0;
  /// What a run holds: inputs, outputs and the workspace.
  int64_t total() const { return inputs + outputs + workspace; }
};

/// The bytes of every buffer of `program` on a graph of `scope`'s sizes, and
/// of its planned workspace. Fails naming the buffer whose size cannot be
/// evaluated, is negative or overflows.
StatusOr<ProgramDeviceBytes> programDeviceBytes(const Program &program,
                                                const FormulaScope &scope);

/// Bytes kept free beside the graph and the buffers: cuBLAS/cuSPARSE
/// handles and workspaces, cached SpMM weights, the loaded module.
constexpr int64_t kDeviceReserveBytes = int64_t(64) << 20;

/// What running a Program on a graph needs at its peak.
struct DeviceMemoryNeed {
  int64_t nodes = 0, edges = 0;
  GraphDeviceBytes graph;
  ProgramDeviceBytes buffers;
  int64_t reserve = kDeviceReserveBytes;
  /// max(graph.peak, graph.kept + buffers.total()) + reserve: the build's
  /// temporaries are released (to the memory pool) before the buffers are
  /// allocated.
  int64_t total = 0;
};

/// The need of running `program` (inputs and outputs bound by the caller
/// included) on a graph of `scope`'s sizes built from the host with the
/// Program's index width.
StatusOr<DeviceMemoryNeed> deviceMemoryNeed(const Program &program,
                                            const FormulaScope &scope,
                                            bool batch = false);

/// The need of a training step (TrainingExecutable) on such a graph: the
/// step's buffers (TrainingProgram::stepBuffers) and the larger of the
/// forward's and the backward's workspaces; `temps` sums both Programs'.
StatusOr<DeviceMemoryNeed> trainingMemoryNeed(const TrainingProgram &training,
                                              const FormulaScope &scope,
                                              bool batch = false);

/// OK when `need.total <= freeBytes`; otherwise an error naming the graph
/// (`what`, its nodes and edges), the bytes needed (graph, buffers) and the
/// bytes free of `totalBytes`.
Status checkDeviceMemory(const DeviceMemoryNeed &need, int64_t freeBytes,
                         int64_t totalBytes, const std::string &what);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_DEVICEBYTES_H
