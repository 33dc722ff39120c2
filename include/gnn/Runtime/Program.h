//===- Program.h - the compiled form of a function ----------------*- C++ -*-===//
//
// Part of gnnc. No MLIR: a Program is what the compiler hands the runtime.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A Program is plain data: CUDA source (a shared prelude and units of one
/// kernel each, compiled separately) with its kernel entry points, buffers
/// whose sizes are formulas of the graph's sizes, and ordered steps (kernel
/// launches, cuSPARSE SpMM, cuBLAS GEMM, fill, copy). It has a stable JSON
/// text form (docs/Runtime.md) that round-trips exactly; Executor.h runs it.
/// This header and its library (GNNProgram) need no CUDA: the compiler
/// produces Programs on machines without the toolkit.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_PROGRAM_H
#define GNN_RUNTIME_PROGRAM_H

#include "gnn/Runtime/Formula.h"

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace gnn {
namespace runtime {

/// Element type of a buffer (elementBytes() in MemoryPlan.h gives its size).
/// Float buffers are f32 or f64, or bf16 and f16 (storage types the kernels
/// compute in f32): a Program generated from a function of f64 tensors has
/// f64 buffers throughout, and its library steps (spmm, gemm) run in double
/// precision; a bf16 or f16 gemm computes in f32 (cublasGemmEx,
/// CUBLAS_COMPUTE_32F).
enum class DType { F32, I32, I64, F64, BF16, F16 };

/// Whether `t` is a float type (f32, f64, bf16 or f16).
inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::BF16 ||
         t == DType::F16;
}

/// Whether `t` is a half-precision storage type (bf16 or f16).
inline bool isHalf(DType t) { return t == DType::BF16 || t == DType::F16; }

/// The name of `t` in a Program's text form: `f32`, `f64`, `bf16`, `f16`,
/// `i32`, `i64`.
const char *dtypeName(DType t);

/// Who provides a buffer: the caller (input, output) or the executor (temp).
enum class BufferRole { Input, Output, Temp };

/// What a caller's buffer holds for the compiled function f: a Program's
/// inputs are f's arguments and its outputs f's results; a training step
/// (TrainingProgram::stepBuffers) adds the forward's residuals (its outputs
/// past f's results), the gradients of f's results it is given (output
/// gradients) and the gradients of f's arguments it writes. Temporaries hold
/// none, and so may the inputs and outputs of a Program written by hand
/// (bound by name only).
enum class BufferUse {
  None,
  Argument,
  Result,
  Residual,
  OutputGradient,
  Gradient
};

struct BufferDecl {
  std::string name;
  BufferRole role = BufferRole::Temp;
  DType dtype = DType::F32;
  /// Number of elements.
  Formula size;
  /// What the buffer holds, and the number of the argument or result it
  /// holds (or the gradient of), from 0; -1 with BufferUse::None.
  BufferUse use = BufferUse::None;
  int64_t index = -1;
};

/// A kernel argument.
struct KernelArg {
  enum class Kind { Buffer, Graph, I32, I64, F32 };
  Kind kind = Kind::Buffer;
  /// Buffer name, or graph array name (csr_row_ptr, csr_col, csr_edge,
  /// csr_dst, csc_col_ptr, csc_row, csc_edge, csc_to_csr, in_degree, out_degree,
  /// csr_rows_by_degree, csc_cols_by_degree).
  std::string name;
  Formula integer;
  float real = 0;
};

struct LaunchStep {
  std::string kernel;
  Formula grid[3];
  unsigned block[3] = {1, 1, 1};
  Formula sharedBytes;
  std::vector<KernelArg> args;
  /// How many steps right before this one it may run beside (0: after
  /// them, as every step runs after the one before). They neither read nor
  /// write what this launch writes, nor write what it reads (a split row
  /// kernel's light rows beside its partial and final kernels,
  /// gnnk.launch's `overlaps`): the executor starts it on a second stream
  /// once the steps before them are done, and joins it before the next
  /// step that runs on the caller's stream (Program::overlapWindows).
  int64_t overlaps = 0;
};

struct SpmmStep {
  std::string input, output, weights; ///< weights empty: all ones
  Formula cols;
  float alpha = 1, beta = 0;
};

struct GemmStep {
  std::string a, b, c;
  Formula m, n, k;
  bool transA = false, transB = false;
  float alpha = 1, beta = 0;
  /// Aᵀ B of f32 matrices (a weight gradient: a sum over every node or
  /// edge) without cuBLAS: the k rows are cut into `chunks` slices, each
  /// summed in double precision into `partials` (an f64 temp of `chunks * m *
  /// n` elements), which are then added in a fixed order (gemmRowSplit,
  /// Library.h). Empty: cuBLAS.
  std::string partials;
  Formula chunks;
  /// With the row split: an f32 vector of m elements that receives A's
  /// column sums over the k rows (Σ_r A[r, i]: the bias gradient beside a
  /// weight gradient, computed in the same kernels; `partials` then holds
  /// chunks * (m * n + m) doubles), or empty.
  std::string rowSums;
  /// A vector of n elements added to every row of C in the GEMM's epilogue
  /// (cuBLASLt's bias epilogue; f32, not with the row split, beta 0), or
  /// empty: C = A B + b with no kernel writing b to every row first.
  std::string bias;
  /// With a bias only: C = relu(A op(B) + b), the ReLU applied in the same
  /// epilogue (cuBLASLt's RELU_BIAS; NaN stays NaN, as torch.relu keeps
  /// it): an MLP's ReLU with no kernel of its own and no pass over the
  /// pre-activation, which is never written.
  bool relu = false;
  /// With the row split only (its kernels are the runtime's own, no cuBLAS
  /// handle or workspace is shared): how many steps right before this one
  /// it may run beside, as LaunchStep::overlaps (a weight gradient beside
  /// the input gradient's steps that follow it, ProgramLowering).
  int64_t overlaps = 0;
};

struct FillStep {
  std::string buffer;
  /// Converted to the buffer's element type (exact for f64 buffers).
  double value = 0;
};

struct CopyStep {
  std::string src, dst;
  Formula elements;
};

using Step = std::variant<LaunchStep, SpmmStep, GemmStep, FillStep, CopyStep>;

/// How many steps right before `step` it runs beside: a launch's or a
/// gemm's `overlaps`, 0 for the other kinds.
int64_t overlapsOf(const Step &step);

/// A piece of a Program's CUDA source that is compiled on its own: the
/// Program's prelude followed by `text` is one NVRTC call, one kernel cache
/// entry and one loaded module.
struct SourceUnit {
  /// The `extern "C" __global__` functions `text` defines (a unit may define
  /// kernels the Program does not launch).
  std::vector<std::string> kernels;
  std::string text;
};

struct Program {
  std::string name;
  /// What every unit starts with (typedefs, includes, device helpers).
  std::string prelude;
  /// The CUDA source in units: each kernel of `kernels` is defined by
  /// exactly one of them.
  std::vector<SourceUnit> units;
  std::vector<std::string> options;
  /// Width of the graph index arrays the kernels were generated for.
  int indexBits = 32;
  /// Whether edge tensors cross the boundary in CSR slot order as they are,
  /// without a permutation step: generated for graphs whose edges arrive
  /// sorted by destination (GraphStats::csrOrder), and refused on others.
  bool csrOrderEdges = false;
  /// The most nodes per graph the kernels hold (block-per-graph kernels keep
  /// a graph in shared memory), refused on graphs with a larger one; 0: no
  /// limit.
  int64_t maxGraphNodes = 0;
  /// The relation count of the kernels that read edge types (`relation`
  /// gathers and reduces): the Program refuses graphs without edge types or
  /// with a relation id at or past it; 0: no kernel reads them.
  int64_t relations = 0;
  /// Counts the function's static leading dimensions fix ("node", "edge",
  /// "src", "dst" to the count): graphs with another count are refused
  /// (the kernels are sized from the graph, the tensors are not).
  std::map<std::string, int64_t> fixedCounts;
  std::vector<std::string> kernels;
  /// Inputs, outputs and temporaries; the outputs (`result<K>`, use Result
  /// with index K) appear in the function's result order.
  std::vector<BufferDecl> buffers;
  std::vector<Step> steps;

  /// The whole CUDA source: the prelude, then every unit's text.
  std::string source() const;
  /// The source of unit `i` as it is compiled: the prelude, then its text.
  std::string unitSource(size_t i) const;

  /// The JSON text form (stable key order, 2-space indent).
  std::string toJson() const;
  /// Parses and checks the text form: unknown keys, missing fields, unknown
  /// buffers or kernels and malformed formulas are errors naming the place.
  static StatusOr<Program> parse(const std::string &json);
  /// Checks references between steps, buffers and kernels.
  Status verify() const;

  /// Steps [first, last] where step `last` (a launch or a row-split gemm)
  /// runs beside the steps before it (overlapsOf), in program order.
  /// Windows may nest or cross (a weight gradient beside steps among which
  /// another weight gradient runs beside others): the executor forks each
  /// `last` onto one second stream at `first`, in the order of `first`, and
  /// joins that stream before the next step after it that runs on the
  /// caller's stream; the memory plan keeps what `last` names live over the
  /// whole window.
  struct OverlapWindow {
    size_t first, last;
  };
  std::vector<OverlapWindow> overlapWindows() const;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_PROGRAM_H
