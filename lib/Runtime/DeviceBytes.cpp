//===- DeviceBytes.cpp - device memory a graph and a Program need ---------===//
//
// Part of gnnc. The figures follow the allocations of Graph::fromHost and
// GraphBuilder::run in Graph.cu; keep them in step.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/DeviceBytes.h"
#include "gnn/Runtime/MemoryPlan.h"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <utility>

using namespace gnn::runtime;

namespace {
/// Sums of products of int64 terms, remembering any overflow.
struct Bytes {
  int64_t value = 0;
  bool overflow = false;

  Bytes &add(int64_t count, int64_t size) {
    int64_t product = 0;
    overflow |= count < 0 || __builtin_mul_overflow(count, size, &product) ||
                __builtin_add_overflow(value, product, &value);
    return *this;
  }
};

Status tooLarge(const std::string &what) {
  return Status::error(what + " needs more than 2^63 bytes of device memory");
}

std::string graphText(int64_t nodes, int64_t edges) {
  return "a graph of " + std::to_string(nodes) + " nodes and " +
         std::to_string(edges) + " edges";
}
} // namespace

StatusOr<GraphDeviceBytes> gnn::runtime::graphDeviceBytes(int64_t nodes,
                                                          int64_t edges,
                                                          int indexBits,
                                                          bool batch,
                                                          bool typed) {
  if (nodes < 0 || edges < 0)
    return Status::error("negative graph size: " + std::to_string(nodes) +
                         " nodes, " + std::to_string(edges) + " edges");
  if (indexBits != 32 && indexBits != 64)
    return Status::error("expected 32- or 64-bit graph indices but got " +
                         std::to_string(indexBits));
  int64_t ib = indexBits / 8;
  // Kept: csr_dst, csr_edge, csr_col, csc_row, csc_edge, csc_to_csr (one
  // index per edge each), csr_row_ptr and csc_col_ptr (nodes + 1), in- and
  // out-degrees (int32 per node), the rows and columns by degree (one
  // index per node each; their counts up to each power of two are on the
  // host) and graph_ptr (graphs + 1 <= nodes + 1 without a batch; a batch's
  // ids without nodes would add to it).
  Bytes kept;
  kept.add(edges, 6 * ib)
      .add(nodes, 2 * ib)
      .add(2, ib)
      .add(nodes, 8)
      .add(nodes, 2 * ib)
      .add(nodes + 1, ib);
  // Peak, in the first sort: the kept arrays, the uploaded int64 source and
  // destination lists (and batch vector), the 64-bit keys in and out, the
  // sort's input values, and CUB's temporary storage (its own copy of keys
  // and values, with room for its per-tile digit counts).
  Bytes peak = kept;
  peak.add(edges, 16).add(edges, 16).add(edges, ib);
  // Then the larger of that sort's temporary storage and the degree sorts'
  // (the ids, the sorted degrees and CUB's copy of both, per node). The
  // statistics' sorted in-degrees with CUB's copy and graph_ptr's crossing
  // counts (one index per node) come after and take less.
  Bytes firstSort, degreeSort;
  firstSort.add(edges, 16 + ib);
  degreeSort.add(nodes, 2 * (4 + ib));
  peak.add(std::max(firstSort.value, degreeSort.value), 1);
  peak.overflow |= firstSort.overflow || degreeSort.overflow;
  if (batch)
    peak.add(nodes, 8);
  if (typed) {
    // csr_type is kept. Setting it, after the build, holds the uploaded
    // lists (the types in the source list's buffer) beside the kept
    // arrays, less than the build's temporaries: the build's peak plus
    // csr_type bounds it.
    kept.add(edges, ib);
    peak.add(edges, ib);
  }
  if (kept.overflow || peak.overflow)
    return tooLarge(graphText(nodes, edges));
  return GraphDeviceBytes{kept.value, peak.value};
}

/// The bytes of `buffers` by role; the workspace is left 0. `what` names
/// their program in errors.
static StatusOr<ProgramDeviceBytes>
sumBuffers(const std::vector<BufferDecl> &buffers, const FormulaScope &scope,
           const std::string &what) {
  ProgramDeviceBytes out;
  Bytes inputs, outputs, temps;
  for (const BufferDecl &b : buffers) {
    StatusOr<int64_t> n = bufferElements(b, scope);
    if (!n.ok())
      return Status(n.error());
    Bytes &sum = b.role == BufferRole::Input    ? inputs
                 : b.role == BufferRole::Output ? outputs
                                                : temps;
    sum.add(*n, static_cast<int64_t>(elementBytes(b.dtype)));
    if (sum.overflow)
      return tooLarge("buffer '" + b.name + "' of " + what);
  }
  Bytes total;
  total.add(inputs.value, 1).add(outputs.value, 1).add(temps.value, 1);
  if (total.overflow)
    return tooLarge("the buffers of " + what);
  out.inputs = inputs.value;
  out.outputs = outputs.value;
  out.temps = temps.value;
  return out;
}

StatusOr<ProgramDeviceBytes>
gnn::runtime::programDeviceBytes(const Program &program,
                                 const FormulaScope &scope) {
  std::string what = "program '" + program.name + "'";
  StatusOr<ProgramDeviceBytes> out = sumBuffers(program.buffers, scope, what);
  if (!out.ok())
    return out;
  StatusOr<MemoryPlan> plan = planMemory(program, scope);
  if (!plan.ok())
    return plan.error();
  if (plan->arenaBytes >
      size_t(INT64_MAX) - size_t(out->inputs + out->outputs + out->temps))
    return tooLarge("the buffers of " + what);
  out->workspace = static_cast<int64_t>(plan->arenaBytes);
  return out;
}

/// The need of `buffers` beside a graph of `scope`'s sizes.
static StatusOr<DeviceMemoryNeed> needWith(const ProgramDeviceBytes &buffers,
                                           const FormulaScope &scope,
                                           int indexBits, bool batch,
                                           bool typed,
                                           const std::string &what) {
  DeviceMemoryNeed need;
  need.nodes = scope.nodes;
  need.edges = scope.edges;
  StatusOr<GraphDeviceBytes> graph =
      graphDeviceBytes(scope.nodes, scope.edges, indexBits, batch, typed);
  if (!graph.ok())
    return graph.error();
  need.graph = *graph;
  need.buffers = buffers;
  Bytes running;
  running.add(graph->kept, 1)
      .add(buffers.inputs, 1)
      .add(buffers.outputs, 1)
      .add(buffers.workspace, 1);
  Bytes total;
  total.add(std::max(graph->peak, running.value), 1).add(need.reserve, 1);
  if (running.overflow || total.overflow)
    return tooLarge(graphText(scope.nodes, scope.edges) + " with the buffers of " +
                    what);
  need.total = total.value;
  return need;
}

StatusOr<DeviceMemoryNeed>
gnn::runtime::deviceMemoryNeed(const Program &program,
                               const FormulaScope &scope, bool batch) {
  StatusOr<ProgramDeviceBytes> buffers = programDeviceBytes(program, scope);
  if (!buffers.ok())
    return buffers.error();
  // (A program that reads edge types runs on a typed graph.)
  return needWith(*buffers, scope, program.indexBits, batch,
                  program.relations > 0, "program '" + program.name + "'");
}

StatusOr<DeviceMemoryNeed>
gnn::runtime::trainingMemoryNeed(const TrainingProgram &training,
                                 const FormulaScope &scope, bool batch) {
  std::string what = "the training step of '" + training.forward.name + "'";
  StatusOr<ProgramDeviceBytes> step =
      sumBuffers(training.stepBuffers(), scope, what);
  if (!step.ok())
    return step.error();
  StatusOr<ProgramDeviceBytes> fwd =
      programDeviceBytes(training.forward, scope);
  if (!fwd.ok())
    return fwd.error();
  StatusOr<ProgramDeviceBytes> bwd =
      programDeviceBytes(training.backward, scope);
  if (!bwd.ok())
    return bwd.error();
  step->temps = fwd->temps + bwd->temps;
  step->workspace = std::max(fwd->workspace, bwd->workspace);
  return needWith(*step, scope, training.forward.indexBits, batch,
                  training.forward.relations > 0 ||
                      training.backward.relations > 0,
                  what);
}

Status gnn::runtime::checkDeviceMemory(const DeviceMemoryNeed &need,
                                       int64_t freeBytes, int64_t totalBytes,
                                       const std::string &what) {
  if (need.total <= freeBytes)
    return Status();
  return Status::error(
      what + ": " + graphText(need.nodes, need.edges) + " needs " +
      std::to_string(need.total) + " bytes of device memory (graph " +
      std::to_string(need.graph.kept) + ", " + std::to_string(need.graph.peak) +
      " while building; inputs and outputs " +
      std::to_string(need.buffers.inputs + need.buffers.outputs) +
      "; workspace " + std::to_string(need.buffers.workspace) + "; reserve " +
      std::to_string(need.reserve) + ") but the device has " +
      std::to_string(freeBytes) + " bytes free of " +
      std::to_string(totalBytes));
}
