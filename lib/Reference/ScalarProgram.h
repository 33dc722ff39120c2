//===- ScalarProgram.h - scalar bodies of linalg ops --------------*- C++ -*-===//
//
// Part of gnnc. Private to the reference evaluator.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The body of a `linalg` op (and top-level scalar `arith`/`math` code)
/// compiled once into a flat list of instructions over double registers, so
/// the evaluator runs it per iteration point without walking the IR.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_REFERENCE_SCALARPROGRAM_H
#define GNN_LIB_REFERENCE_SCALARPROGRAM_H

#include <cmath>

#include "mlir/IR/Block.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace gnn {
namespace reference {

/// One instruction: `regs[dst] = op(regs[a], regs[b], regs[c])`.
///
/// An integer of `bits` bits is held as its signed value (i1 as 0 or 1),
/// exact up to 53 bits (an i64 or index past 2^53 is rounded, as a double
/// is). Integer ops wrap to their width and read their operands signed or
/// unsigned as the op says, with arith's semantics: `addi` of two i32
/// wraps, `divui` and `cmpi ult` read -1 as 2^32 - 1, `sitofp` of an i1
/// true is -1, `andi`/`ori`/`xori` are bitwise.
struct Instr {
  enum Opcode : uint8_t {
    Const, Copy, Add, Sub, Mul, Div, Rem, Neg, Maximum, Minimum, MaxNum,
    MinNum, CmpF, Select, Trunc, Exp, Exp2, Log, Log2, Log1p, Expm1, Tanh,
    Sqrt, Rsqrt, Pow, Abs, Erf, Sin, Cos, Floor, Ceil, Fma, Index,
    // Integers (`bits`: the operands' width; casts: `toBits` the result's).
    AddI, SubI, MulI, DivSI, DivUI, CeilDivSI, FloorDivSI, CeilDivUI, RemSI,
    RemUI, MaxSI, MaxUI, MinSI, MinUI,
    CmpI, AndI, OrI, XorI, ShLI, ShRSI, ShRUI, ExtSI, ExtUI, TruncI, SIToFP,
    UIToFP
  };
  Opcode op;
  uint8_t bits = 0, toBits = 0;
  int dst = 0, a = 0, b = 0, c = 0;
  /// Constant value, comparison predicate or loop dimension.
  double imm = 0;
};

/// A compiled scalar body: registers `0 .. numArgs-1` hold the block
/// arguments, `yields` name the registers yielded.
class ScalarProgram {
public:
  /// Compiles the ops of `block` (all but its terminator), whose arguments
  /// become the first registers. Values defined outside the block are asked
  /// of `outer`, which must return a scalar or fail (it emits the error).
  /// Unsupported ops get an error on the op.
  static mlir::FailureOr<ScalarProgram>
  compile(mlir::Block &block,
          llvm::function_ref<mlir::FailureOr<double>(mlir::Value)> outer);

  /// Compiles a single top-level scalar op with operand values `operands`.
  static mlir::FailureOr<double> evaluateOp(mlir::Operation *op,
                                            llvm::ArrayRef<double> operands);

  /// Runs the program on `width` points at once, which differ only in
  /// loop `dim`'s index (`index[dim] + l` for point l; `index` holds the
  /// loop indices for `linalg.index`): register r of point l is
  /// `regs[r][l]`, the block arguments' filled in (they are only read: they
  /// may point into tensors). Each instruction is applied to all points
  /// before the next, so its dispatch is paid once per `width` points; each
  /// point's values are those of running it alone.
  void runBatch(double *const *regs, int64_t width, const int64_t *index,
                int dim) const;

  /// Where the program sums into its one output, register `out` (yields
  /// `out + t` and reads `out` nowhere else, so t does not depend on it):
  /// t's register; else -1.
  int sumTermRegister(int out) const;

  int numRegisters() const { return numRegs; }
  llvm::ArrayRef<int> yielded() const { return yields; }

private:
  std::vector<Instr> code;
  std::vector<int> yields;
  int numRegs = 0;
};

/// arith.maximumf / arith.minimumf: NaN if either operand is NaN, and -0.0
/// ordered below +0.0 whatever the operands' order (as the GPU's max.NaN /
/// min.NaN; std::max would return the first of two zeros).
inline double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) ? a : b;
  if (a == 0 && b == 0)
    return std::signbit(a) && std::signbit(b) ? -0.0 : 0.0;
  return a > b ? a : b;
}
inline double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) ? a : b;
  if (a == 0 && b == 0)
    return std::signbit(a) || std::signbit(b) ? -0.0 : 0.0;
  return a < b ? a : b;
}

} // namespace reference
} // namespace gnn

#endif // GNN_LIB_REFERENCE_SCALARPROGRAM_H
