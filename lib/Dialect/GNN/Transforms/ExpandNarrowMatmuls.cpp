//===- ExpandNarrowMatmuls.cpp - narrow edge products as maps -------------===//
//
// Part of gnnc. `gnn-expand-narrow-matmuls` (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/Transforms/GemmBias.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNEXPANDNARROWMATMULS
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// The longest contraction of a narrow edge product: each element of the
/// map costs that many products, read from the edge's row and the weight.
constexpr int64_t kNarrowMatmulMaxK = 8;

/// Whether `mm` is a *narrow edge product*: `C += A B` or `C += A Bᵀ` (B a
/// weight `[n, k]` as PyTorch stores it) of f32 or f64 tensors whose rows
/// are edges, with a static contraction of at most kNarrowMatmulMaxK and a
/// static B. GINE's `lin(edge_attr)` (edge_dim 4): a GEMM would write
/// `[E, C]` values for the edge pass to read back; as a map of `k` products
/// per element the edge pass computes them where it reads them.
bool isNarrowEdgeMatmul(linalg::MatmulOp mm) {
  if (!mm.hasPureTensorSemantics() || mm->getNumResults() != 1)
    return false;
  auto a = dyn_cast<RankedTensorType>(mm.getInputs()[0].getType());
  auto b = dyn_cast<RankedTensorType>(mm.getInputs()[1].getType());
  auto c = dyn_cast<RankedTensorType>(mm.getResult(0).getType());
  if (!a || !b || !c || a.getRank() != 2 || b.getRank() != 2 ||
      c.getRank() != 2 || !b.hasStaticShape() || a.isDynamicDim(1) ||
      c.isDynamicDim(1))
    return false;
  Type element = a.getElementType();
  if (!(element.isF32() || element.isF64()) || b.getElementType() != element ||
      c.getElementType() != element)
    return false;
  int64_t k = a.getDimSize(1);
  if (k < 1 || k > kNarrowMatmulMaxK)
    return false;
  if (!gemmTransposesB(mm))
    return false;
  return inferDomain(mm.getResult(0)) == Domain::Edge ||
         inferDomain(mm.getInputs()[0]) == Domain::Edge;
}

/// `C = init + A B` (or `A Bᵀ`) as one all-parallel generic: A's row read
/// at each of its k columns, B at each k and the element's column, the
/// products summed in k order, then the init (or the broadcast vector it
/// was made from; nothing for a zero fill) added.
void expand(IRRewriter &rewriter, linalg::MatmulOp mm) {
  MLIRContext *ctx = mm.getContext();
  Location loc = mm.getLoc();
  Value a = mm.getInputs()[0], b = mm.getInputs()[1];
  Value init = mm.getOutputs()[0];
  auto type = cast<RankedTensorType>(mm.getResult(0).getType());
  int64_t k = cast<RankedTensorType>(a.getType()).getDimSize(1);
  bool transposed = *gemmTransposesB(mm);
  rewriter.setInsertionPoint(mm);

  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (int64_t i = 0; i < k; ++i) {
    ins.push_back(a);
    maps.push_back(
        AffineMap::get(2, 0, {d0, getAffineConstantExpr(i, ctx)}, ctx));
  }
  for (int64_t i = 0; i < k; ++i) {
    ins.push_back(b);
    AffineExpr c = getAffineConstantExpr(i, ctx);
    maps.push_back(AffineMap::get(2, 0,
                                  transposed ? SmallVector<AffineExpr>{d1, c}
                                             : SmallVector<AffineExpr>{c, d1},
                                  ctx));
  }
  // A zero start adds nothing; a bias is read as its vector.
  auto fill = init.getDefiningOp<linalg::FillOp>();
  bool zero = fill && matchPattern(fill.value(), m_AnyZeroFloat());
  auto start = init.getDefiningOp<linalg::GenericOp>();
  if (Value bias = start ? broadcastVectorOf(start) : Value()) {
    ins.push_back(bias);
    maps.push_back(AffineMap::get(2, 0, {d1}, ctx));
  } else if (!zero) {
    ins.push_back(init);
    maps.push_back(AffineMap::get(2, 0, {d0, d1}, ctx));
  }
  maps.push_back(AffineMap::get(2, 0, {d0, d1}, ctx));

  SmallVector<Value> sizes;
  if (type.isDynamicDim(0))
    sizes.push_back(tensor::DimOp::create(rewriter, loc, a, 0));
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType(), sizes);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ins, ValueRange{empty}, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value acc = arith::MulFOp::create(nb, l, args[0], args[k]);
        for (int64_t i = 1; i < k; ++i)
          acc = arith::AddFOp::create(
              nb, l, acc, arith::MulFOp::create(nb, l, args[i], args[k + i]));
        if (!zero)
          acc = arith::AddFOp::create(nb, l, acc, args[2 * k]);
        linalg::YieldOp::create(nb, l, acc);
      });
  generic->setDiscardableAttrs(mm->getDiscardableAttrDictionary());
  rewriter.replaceOp(mm, generic->getResults());
  // The start, read by nothing else now, goes with it, and so does what
  // only it read (its tensor.empty and that one's size).
  SmallVector<Operation *> dead;
  if (Operation *def = init.getDefiningOp())
    dead.push_back(def);
  while (!dead.empty()) {
    Operation *op = dead.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !llvm::is_contained(dead, def))
        dead.push_back(def);
    rewriter.eraseOp(op);
  }
}

struct GNNExpandNarrowMatmulsPass
    : public mlir::gnn::impl::GNNExpandNarrowMatmulsBase<
          GNNExpandNarrowMatmulsPass> {
  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> narrow;
    // A product the function returns (a result, or a training forward's
    // residual) is written either way: the GEMM writes it best.
    getOperation().walk([&](linalg::MatmulOp mm) {
      if (isNarrowEdgeMatmul(mm) &&
          llvm::none_of(mm->getUsers(), [](Operation *user) {
            return isa<func::ReturnOp>(user);
          }))
        narrow.push_back(mm);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::MatmulOp mm : narrow)
      expand(rewriter, mm);
  }
};

} // namespace
