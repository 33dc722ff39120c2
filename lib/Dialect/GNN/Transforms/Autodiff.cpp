//===- Autodiff.cpp - reverse-mode derivatives of gnn functions -----------===//
//
// Part of gnnc. `gnn-autodiff`: for every function with arguments marked
// `gnn.differentiable`, builds the backward ops in a scratch copy of the
// function (the forward ops, then each active op's VJP in reverse order,
// gradients of values used several times summed), then splits it:
//
//   @f_fwd(args)                         -> (results, residuals)
//   @f_bwd(graphs, residuals, dresults)  -> (d differentiable args)
//
// The residuals are the forward values (arguments included) the backward
// ops read. Only ops that depend on a differentiable argument (active ops)
// are differentiated; backward ops nothing uses are dropped.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/Transforms/Autodiff.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNAUTODIFF
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

/// Whether `v` can carry a gradient: a float tensor.
static bool isDifferentiable(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// `a + b` elementwise (same shapes).
static Value accumulate(OpBuilder &b, Location loc, Value a, Value c) {
  auto type = cast<RankedTensorType>(a.getType());
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(b, loc, a, i));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType(), dyn);
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{a, c}, ValueRange{init}, maps,
             iters,
             [](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
             })
      .getResult(0);
}

/// Zeros shaped like `like`.
static Value zerosLike(OpBuilder &b, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(b, loc, like, i));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType(), dyn);
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  return linalg::FillOp::create(b, loc, zero, init).getResult(0);
}

/// The argument attributes of a value passed to a backward function: edge
/// tensors say so (a dynamic leading size is read as nodes otherwise).
static Domain domainOf(Value v) {
  Domain d = inferDomain(v);
  if (d != Domain::Unknown)
    return d;
  // Sizes taken from another tensor: a fill of an empty sized by tensor.dim.
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return domainOf(fill.getOutputs()[0]);
  if (auto empty = v.getDefiningOp<tensor::EmptyOp>()) {
    auto type = cast<RankedTensorType>(empty.getType());
    if (type.isDynamicDim(0))
      if (auto dim = empty.getDynamicSizes()[0].getDefiningOp<tensor::DimOp>())
        if (std::optional<int64_t> i = dim.getConstantIndex(); i && *i == 0)
          return domainOf(dim.getSource());
  }
  return Domain::Unknown;
}

static DictionaryAttr domainAttrs(Value v) {
  MLIRContext *ctx = v.getContext();
  if (isa<RankedTensorType>(v.getType()) && domainOf(v) == Domain::Edge)
    return DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, kDomainAttrName),
                             StringAttr::get(ctx, "edge"))});
  return DictionaryAttr::get(ctx);
}

LogicalResult mlir::gnn::differentiate(func::FuncOp func) {
  if (func.isDeclaration())
    return func.emitOpError("cannot be differentiated: it has no body");
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("cannot be differentiated: expects one block");
  Location loc = func.getLoc();
  MLIRContext *ctx = func.getContext();
  SmallVector<unsigned> wrt;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kDifferentiableAttrName)) {
      if (!isDifferentiable(func.getArgument(i)))
        return func.emitOpError()
               << "marks argument " << i << " `" << kDifferentiableAttrName
               << "` but it is not a float tensor ("
               << func.getArgument(i).getType() << ")";
      wrt.push_back(i);
    }

  // The scratch function: f's body plus one argument per result gradient.
  OpBuilder mb(func);
  mb.setInsertionPointAfter(func);
  auto tmp = cast<func::FuncOp>(mb.clone(*func));
  tmp.setSymName((func.getSymName() + "_autodiff_scratch").str());
  Block &body = tmp.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> dresults;
  for (Value r : ret.getOperands())
    dresults.push_back(body.addArgument(r.getType(), loc));
  auto cleanup = llvm::make_scope_exit([&] { tmp.erase(); });

  // Active values: those depending on a differentiable argument.
  DenseSet<Value> active;
  for (unsigned i : wrt)
    active.insert(body.getArgument(i));
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator()) {
    forward.push_back(&op);
    bool on = false;
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        on |= active.contains(v);
    });
    if (on)
      for (Value r : op.getResults())
        active.insert(r);
  }

  OpBuilder b(ret);
  DenseMap<Value, Value> grads;
  auto addGrad = [&](Value v, Value g) {
    if (!g || !active.contains(v) || !isDifferentiable(v))
      return;
    Value &slot = grads[v];
    slot = slot ? accumulate(b, loc, slot, g) : g;
  };
  for (auto [r, d] : llvm::zip(ret.getOperands(), dresults))
    addGrad(r, d);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> dys;
    bool any = false;
    for (Value r : op->getResults()) {
      dys.push_back(grads.lookup(r));
      any |= static_cast<bool>(dys.back());
    }
    if (!any)
      continue;
    auto rule = dyn_cast<VJPOpInterface>(op);
    if (!rule)
      return op->emitOpError()
             << "has no derivative rule (VJPOpInterface) and lies between a "
                "differentiable argument and a result of @"
             << func.getSymName();
    SmallVector<Value> dxs;
    if (failed(rule.buildVJP(b, dys, dxs)))
      return failure();
    for (auto [x, dx] : llvm::zip(op->getOperands(), dxs))
      addGrad(x, dx);
  }
  SmallVector<Value> outs;
  for (unsigned i : wrt) {
    Value arg = body.getArgument(i);
    Value g = grads.lookup(arg);
    outs.push_back(g ? g : zerosLike(b, loc, arg));
  }

  // Backward ops nothing reads go; what remains reads the residuals.
  DenseSet<Operation *> forwardSet(forward.begin(), forward.end());
  SmallVector<Operation *> backward;
  for (Operation *op = &body.front(); op != ret; op = op->getNextNode())
    if (!forwardSet.contains(op))
      backward.push_back(op);
  DenseSet<Value> needed(outs.begin(), outs.end());
  SmallVector<Operation *> live;
  for (Operation *op : llvm::reverse(backward)) {
    bool used = llvm::any_of(op->getResults(),
                             [&](Value r) { return needed.contains(r); });
    if (!used)
      continue;
    live.push_back(op);
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        needed.insert(v);
    });
  }
  std::reverse(live.begin(), live.end());
  DenseSet<Operation *> liveSet(live.begin(), live.end());
  auto isBackward = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && liveSet.contains(def);
  };
  auto isResultGrad = [&](Value v) {
    return llvm::is_contained(dresults, v);
  };
  // Residuals in a stable order: arguments, then forward results in program
  // order.
  llvm::SetVector<Value> residuals;
  SmallVector<Value> graphs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Value a = body.getArgument(i);
    if (isa<GraphType>(a.getType()))
      graphs.push_back(a);
    else if (needed.contains(a))
      residuals.insert(a);
  }
  for (Operation *op : forward)
    for (Value r : op->getResults())
      if (needed.contains(r) && !isa<GraphType>(r.getType()))
        residuals.insert(r);
  // Region-internal values (inside linalg bodies) are not residuals; values
  // defined by backward ops or result gradients are not either.
  // Constants are made again in the backward function rather than passed.
  SmallVector<Operation *> constants;
  for (Operation *op : forward)
    if (op->hasTrait<OpTrait::ConstantLike>() &&
        llvm::any_of(op->getResults(),
                     [&](Value r) { return needed.contains(r); }))
      constants.push_back(op);
  residuals.remove_if([&](Value v) {
    Operation *def = v.getDefiningOp();
    return isBackward(v) || isResultGrad(v) ||
           (def && def->hasTrait<OpTrait::ConstantLike>()) ||
           (isa<BlockArgument>(v) &&
            cast<BlockArgument>(v).getOwner() != &body);
  });

  // @f_fwd: the forward ops, returning the results then the residuals.
  mb.setInsertionPointAfter(func);
  auto fwd = cast<func::FuncOp>(mb.clone(*func));
  fwd.setSymName((func.getSymName() + "_fwd").str());
  {
    IRMapping map;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      map.map(body.getArgument(i), fwd.getArgument(i));
    // Map the scratch function's forward values to the clone's, in order.
    Block &fb = fwd.getBody().front();
    auto it = fb.begin();
    for (Operation *op : forward) {
      for (auto [a, c] : llvm::zip(op->getResults(), it->getResults()))
        map.map(a, c);
      ++it;
    }
    auto fret = cast<func::ReturnOp>(fb.getTerminator());
    SmallVector<Value> values(fret.getOperands());
    SmallVector<Type> types(fwd.getResultTypes());
    for (Value r : residuals) {
      values.push_back(map.lookup(r));
      types.push_back(r.getType());
    }
    OpBuilder rb(fret);
    func::ReturnOp::create(rb, fret.getLoc(), values);
    fret.erase();
    fwd.setFunctionType(FunctionType::get(ctx, fwd.getArgumentTypes(), types));
    fwd.setResAttrsAttr(ArrayAttr());
  }

  // @f_bwd: graphs, residuals, result gradients -> argument gradients.
  mb.setInsertionPointAfter(fwd);
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argAttrs;
  for (Value g : graphs) {
    argTypes.push_back(g.getType());
    argAttrs.push_back(DictionaryAttr::get(ctx));
  }
  for (Value r : residuals) {
    argTypes.push_back(r.getType());
    argAttrs.push_back(domainAttrs(r));
  }
  for (auto [r, d] : llvm::zip(ret.getOperands(), dresults)) {
    argTypes.push_back(d.getType());
    argAttrs.push_back(domainAttrs(r));
  }
  SmallVector<Type> gradTypes;
  for (Value g : outs)
    gradTypes.push_back(g.getType());
  auto bwd = func::FuncOp::create(mb, loc, (func.getSymName() + "_bwd").str(),
                                  FunctionType::get(ctx, argTypes, gradTypes));
  bwd.setVisibility(func.getVisibility());
  bwd.setArgAttrsAttr(ArrayAttr::get(ctx, argAttrs));
  Block *entry = bwd.addEntryBlock();
  {
    IRMapping map;
    unsigned k = 0;
    for (Value g : graphs)
      map.map(g, entry->getArgument(k++));
    for (Value r : residuals)
      map.map(r, entry->getArgument(k++));
    for (Value d : dresults)
      map.map(d, entry->getArgument(k++));
    OpBuilder bb = OpBuilder::atBlockEnd(entry);
    for (Operation *op : constants)
      bb.clone(*op, map);
    for (Operation *op : live)
      bb.clone(*op, map);
    SmallVector<Value> results;
    for (Value g : outs)
      results.push_back(map.lookupOrDefault(g));
    func::ReturnOp::create(bb, loc, results);
  }
  return success();
}

namespace {
struct GNNAutodiff : public mlir::gnn::impl::GNNAutodiffBase<GNNAutodiff> {
  using GNNAutodiffBase::GNNAutodiffBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect,
                    math::MathDialect, tensor::TensorDialect, GNNDialect>();
    registerVJPModels(registry);
  }

  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs;
    for (auto f : getOperation().getOps<func::FuncOp>())
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        if (f.getArgAttr(i, kDifferentiableAttrName)) {
          funcs.push_back(f);
          break;
        }
    SymbolTable symbols(getOperation());
    for (func::FuncOp f : funcs) {
      for (StringRef suffix : {"_fwd", "_bwd"})
        if (symbols.lookup((f.getSymName() + suffix).str())) {
          f.emitOpError() << "cannot be differentiated: @" << f.getSymName()
                          << suffix << " exists already";
          return signalPassFailure();
        }
      if (failed(differentiate(f)))
        return signalPassFailure();
    }
  }
};
} // namespace
