//===- KernelBuilder.h - building one gnnk.kernel from a group ----*- C++ -*-===//
//
// Part of gnnc. The state shared by the lowering patterns of every group
// family: the kernel being built, its parameters (tensor operands, results,
// graph arrays, sizes), index arithmetic, and the inlining of linalg bodies
// (scores, epilogues) as scalar arith/math ops.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_KERNELBUILDER_H
#define GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_KERNELBUILDER_H

#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace mlir {
namespace gnnk {

/// Row count of a tensor as an affine expression of the size symbols
/// (s0 = nodes, s1 = edges): a constant for a static leading dimension, else
/// from the value's node/edge domain. Emits a diagnostic on failure.
FailureOr<AffineExpr> rowsExpr(Value value);

/// Elements per row (product of the static trailing dimensions); emits a
/// diagnostic at `where` for dynamic trailing dimensions or tensors of
/// elements other than f16, bf16, f32 and f64.
FailureOr<int64_t> rowElements(Value value, Operation *where);

/// The arithmetic type of the tensors of `group`: f64 for f64 tensors, f32
/// for f32, bf16 and f16 ones (f32 for a group without float tensors).
/// gnn-lower-to-kernels checks first that a function has one.
FloatType groupArithmeticType(gnn::KernelGroupOp group);

/// A launch-shape map ()[s0, s1, s2, s3, s4] -> (e).
AffineMap sizeMap(AffineExpr e);

/// Creates the combine region `region` (of a team_reduce, block_reduce or
/// for_edges merge) over `types`: the builder `body` gets this side's values
/// then the other's and returns the combination.
void buildCombineRegion(
    Location loc, Region &region, TypeRange types,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)>
        body);

/// Builds one gnnk.kernel for a kernel group and the gnnk.launch replacing it.
class KernelBuilder {
public:
  /// Starts kernel `name` (inserted before `group`'s function) with `block`
  /// threads per block; graph arrays use `indexBits`-bit integers.
  KernelBuilder(gnn::KernelGroupOp group, StringRef name, int64_t block,
                int indexBits);

  gnn::KernelGroupOp group;
  KernelOp kernel;
  OpBuilder b;
  Location loc;
  int indexBits;
  /// The arithmetic type of the group (f32, or f64 for f64 tensors): what
  /// the kernel computes in outside of sum accumulators (f64), what loads of
  /// its tensors give (bf16 and f16 widened) and stores take (rounded).
  FloatType ft;

  //===--------------------------------------------------------------------===//
  // Parameters
  //===--------------------------------------------------------------------===//

  /// The buffer of `tensor`, a value defined outside the group (one launch
  /// operand per distinct tensor).
  Value operand(Value tensor);
  /// The buffer of the group's `i`-th result.
  Value result(unsigned i);
  /// The same, marked `gnnk.accumulate`: zeroed before the launch, the
  /// kernel adding into it (gnnk.atomic_add).
  Value accumulatedResult(unsigned i);
  /// A graph index array (csr_row_ptr, csr_col, ...).
  Value graph(StringRef array);
  /// A graph size (nodes, edges, graphs) as an index, cast at the kernel's
  /// start.
  Value size(StringRef which);
  /// An affine expression of the size symbols evaluated at the kernel's start.
  Value sizeValue(AffineExpr e);

  //===--------------------------------------------------------------------===//
  // Scalars
  //===--------------------------------------------------------------------===//

  Value idx(int64_t v);
  /// A constant of the group's float type `ft`.
  Value fp(double v);
  /// A constant of float type `type`; for bf16 and f16 the value rounded to
  /// `type`, as an f32.
  Value fp(Type type, double v);
  Value f64(double v);
  /// `v` converted to float type `type` (arith.extf / arith.truncf), or `v`
  /// when it has that type.
  Value castFloat(Value v, Type type);
  Value add(Value a, Value c);
  Value sub(Value a, Value c);
  Value mul(Value a, Value c);
  Value mul(Value a, int64_t c) { return c == 1 ? a : mul(a, idx(c)); }
  Value div(Value a, int64_t c);
  Value rem(Value a, int64_t c);
  Value lt(Value a, Value c);
  /// The loop indices of the element at flat position `k` of a row of
  /// `type`, after `first` (the row index): [first, i1, ..., in].
  SmallVector<Value> rowIndices(Value first, Value k, RankedTensorType type);
  /// `array[pos]` of a graph index array, as an index.
  Value loadIndex(Value array, Value pos);
  /// `n` consecutive elements of `buffer` from `index`, in the arithmetic
  /// type (bf16 and f16 widened to f32).
  SmallVector<Value> load(Value buffer, Value index, int n = 1);
  void store(ValueRange values, Value buffer, Value index);

  //===--------------------------------------------------------------------===//
  // Bodies
  //===--------------------------------------------------------------------===//

  /// Inlines the scalar body of `op` at the insertion point with `args` for
  /// its block arguments and `loopIdx` for linalg.index; returns the yielded
  /// values. Constants defined outside the body are cloned in.
  FailureOr<SmallVector<Value>> inlineBody(linalg::GenericOp op,
                                           ValueRange args,
                                           ValueRange loopIdx);
  /// A copy of constant `c` at the insertion point; a bf16 or f16 one in
  /// the arithmetic type (fp).
  Value cloneConstant(arith::ConstantOp c);
  /// Clones `inner` (an arith or math op of a linalg body) with its bf16
  /// and f16 values computed in f32: widenings become no-ops, roundings
  /// round and widen back, constants and results are f32.
  void cloneInArithmeticType(Operation &inner, IRMapping &map);
  /// Inlines a combine-like region (block arguments `args`); returns its
  /// yielded values.
  SmallVector<Value> inlineRegion(Region &region, ValueRange args);

  /// Evaluates elements of tensors computed inside the group (set by
  /// lowerings that fuse producers); `access` defers to it for them.
  std::function<FailureOr<Value>(Value tensor, AffineMap map,
                                 ValueRange loopIdx, Operation *where)>
      groupElement;

  /// The element of tensor `operand` (defined outside the group, a constant
  /// fill, or computed in the group through `groupElement`) at loop indices
  /// `loopIdx` through `map`.
  FailureOr<Value> access(Value operand, AffineMap map, ValueRange loopIdx,
                          Operation *where);
  /// The constant a tensor is filled with (linalg.fill of arith.constant),
  /// if it is one.
  static std::optional<double> fillConstant(Value tensor);

  /// Applies `consumers` (elementwise linalg.generic ops, each reading the
  /// previous one's result or `first` with the identity map) to `value`, the
  /// element of `first` at row `row` and flat position `k` in the row.
  FailureOr<Value> applyConsumers(ArrayRef<linalg::GenericOp> consumers,
                                  Value first, Value value, Value row,
                                  Value k);

  /// buildCombineRegion at the group's location.
  void buildCombine(Region &region, TypeRange types,
                    function_ref<SmallVector<Value>(OpBuilder &, ValueRange,
                                                    ValueRange)>
                        body);

  //===--------------------------------------------------------------------===//
  // Finishing
  //===--------------------------------------------------------------------===//

  /// Ends the kernel body, sets its signature and launch shape, and returns
  /// the launch of it on the group's operands, placed before the group, with
  /// `rows` for each group result.
  LaunchOp finish(AffineExpr grid, ArrayRef<AffineExpr> rows, Value graphValue);
  /// The same with a capped grid (the minimum of `grid`'s results) and
  /// launch results of `resultTypes` rather than the group's (the first
  /// kernel of a two-kernel lowering, whose results are a workspace).
  LaunchOp finish(ArrayRef<AffineExpr> grid, ArrayRef<AffineExpr> rows,
                  Value graphValue, TypeRange resultTypes);
  /// Launch results of `types` instead of the group's (call before
  /// `result`): their element types type the result parameters.
  void setResultTypes(TypeRange types) { resultTypes.assign(types.begin(), types.end()); }

private:
  SmallVector<Value> launchOperands;
  /// The launch's result types when not the group's (setResultTypes).
  SmallVector<Type> resultTypes;
  SmallVector<NamedAttrList> argAttrs;
  llvm::DenseMap<Value, Value> operandParams;
  llvm::DenseMap<unsigned, Value> resultParams;
  llvm::StringMap<Value> graphParams, sizeParams;
  Block *entry = nullptr;
  /// Where size casts and hoisted constants go (before `marker`).
  OpBuilder top;
  Operation *marker = nullptr;

  BlockArgument addParam(Type type, NamedAttribute binding);
};

} // namespace gnnk
} // namespace mlir

#endif // GNN_LIB_DIALECT_GNNKERNEL_TRANSFORMS_KERNELBUILDER_H
