//===- CUDAPrinterState.h - state of the gnnk CUDA printer ------*- C++ -*-===//
//
// Part of gnnc. Private to the CUDA target.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The printer state shared by the print functions of the gnnk CUDA printer:
/// the output stream with its indentation, the C expression of every SSA
/// value in scope (a local's name, a parameter's name or a literal), and the
/// facts about the kernel being printed that its ops need. The print
/// functions are split by op family: CUDAPrinter.cpp (kernels, thread
/// mappings, edge loops, reductions, memory) and CUDAPrinterScalar.cpp
/// (arith, math, scf).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_TARGET_CUDA_CUDAPRINTERSTATE_H
#define GNN_LIB_TARGET_CUDA_CUDAPRINTERSTATE_H

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/IndentedOstream.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace mlir {
namespace gnn {
namespace cuda {

/// The C type of a scalar of type `type` (`float`, `double`, `bool`, `int`,
/// `long long`), or "" if the printer does not support it.
StringRef getScalarType(Type type);

/// An exact C literal of a floating-point constant of type `type` (f32 or
/// f64); NaNs and infinities keep their bits.
std::string getFloatLiteral(const APFloat &value, Type type);

/// A C literal of an integer constant of type `type` (i1, i32, i64, index).
std::string getIntegerLiteral(const APInt &value, Type type);

/// The printer state of one module; kernel facts are reset per kernel.
class CUDAPrinterState {
public:
  CUDAPrinterState(llvm::raw_ostream &os, int indexBits)
      : os(os), indexBits(indexBits) {}

  /// The output, indented to the current scope.
  raw_indented_ostream &ostream() { return os; }
  /// The width of graph indices (`idx_t`), 32 or 64.
  int getIndexBits() const { return indexBits; }

  /// Starts printing `kernel`: forgets the previous kernel's names and
  /// records which buffers the kernel writes.
  void startKernel(gnnk::KernelOp kernel);
  /// The kernel being printed.
  gnnk::KernelOp getKernel() const { return kernel; }
  /// Whether some gnnk.store of the kernel writes `buffer` (a parameter).
  bool isWritten(Value buffer) const { return written.contains(buffer); }

  /// A local name `<prefix><N>` unique in the kernel.
  std::string getFreshName(StringRef prefix) {
    return (prefix + Twine(counter++)).str();
  }
  /// Makes `expr` the C expression of `value`.
  void bind(Value value, StringRef expr) { exprs[value] = exprText.save(expr); }
  /// The C expression of `value`, which dominance guarantees was bound. The
  /// text stays valid until the next kernel starts, whatever is bound
  /// meanwhile (a StringRef into a map's own strings dangled when a later
  /// bind grew the map: a vector load's second half once printed an empty
  /// index).
  StringRef getExpr(Value value) const {
    auto it = exprs.find(value);
    assert(it != exprs.end() && "a value is printed before its uses");
    return it->second;
  }

  /// The C type of `value`'s type; on an unsupported type emits an error on
  /// `where` naming the type and fails.
  FailureOr<StringRef> getType(Operation *where, Type type);

  /// Prints `const T <prefix>N = rhs;` for `result` and binds the new name to
  /// it.
  LogicalResult printConstLocal(Value result, const Twine &rhs,
                                StringRef prefix = "v");
  /// Prints `T <prefix>N = init;` for every value of `inits` (mutable
  /// locals: loop-carried values, reduction accumulators) and returns the
  /// names.
  FailureOr<SmallVector<std::string>>
  printMutableLocals(Operation *where, ValueRange inits, StringRef prefix);
  /// Prints `targets[k] = values[k];` for every k, through temporaries when
  /// one of the values is another target (so that a swap is correct); an
  /// assignment of a target to itself is left out.
  void printAssignments(ArrayRef<std::string> targets,
                        ArrayRef<std::string> values, TypeRange types);

  /// Prints every op of `block` but its terminator.
  LogicalResult printBlock(Block &block);
  /// Prints the ops of `block` (a combine or loop body) in place with its
  /// arguments bound to `args`, and returns the C expressions of the values
  /// its terminator yields.
  LogicalResult printInlined(Block &block, ArrayRef<std::string> args,
                             SmallVectorImpl<std::string> &yields);

private:
  raw_indented_ostream os;
  int indexBits;
  gnnk::KernelOp kernel;
  llvm::DenseSet<Value> written;
  llvm::DenseMap<Value, StringRef> exprs;
  /// The text of `exprs`, freed when the next kernel starts.
  llvm::BumpPtrAllocator exprStorage;
  llvm::StringSaver exprText{exprStorage};
  unsigned counter = 0;
};

/// Prints `op` (any op inside a kernel body but a terminator).
LogicalResult printOperation(CUDAPrinterState &state, Operation &op);

/// Prints an arith, math or scf op; emits "is not supported by the CUDA
/// printer" on any other op and fails.
LogicalResult printScalarOperation(CUDAPrinterState &state, Operation &op);

} // namespace cuda
} // namespace gnn
} // namespace mlir

#endif // GNN_LIB_TARGET_CUDA_CUDAPRINTERSTATE_H
