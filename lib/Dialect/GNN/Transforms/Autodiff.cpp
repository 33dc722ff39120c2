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
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
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

/// The argument attributes of a value passed to a backward function: edge
/// tensors and the sides of a bipartite graph say so, and so do node tensors
/// with a static leading size (a dynamic one is read as nodes without it; a
/// static one could be either, and the backward's graph ops would not
/// verify).
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
  if (!isa<RankedTensorType>(v.getType()))
    return DictionaryAttr::get(ctx);
  Domain d = domainOf(v);
  auto type = cast<RankedTensorType>(v.getType());
  bool staticRows = type.getRank() >= 1 && !type.isDynamicDim(0);
  if (d != Domain::Edge && d != Domain::Src && d != Domain::Dst &&
      !(d == Domain::Node && staticRows))
    return DictionaryAttr::get(ctx);
  return DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, kDomainAttrName),
                           StringAttr::get(ctx, stringifyDomain(d)))});
}

/// Whether `op` may run again in the backward function instead of passing
/// its results: pure tensor computations.
static bool isRecomputable(Operation *op) {
  // Scalar arithmetic (sizes, scale factors read by linalg bodies).
  if (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
      llvm::none_of(op->getResultTypes(),
                    [](Type t) { return isa<ShapedType>(t); }))
    return true;
  if (isa<GraphOpInterface, tensor::EmptyOp, tensor::DimOp,
          tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
          linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.hasPureTensorSemantics();
}

/// Whether `v` (an edge value) reaches, through edge-valued ops, what a
/// max/min aggregation compares: an spmm max/min's input or weights, a reduce
/// max/min's input. Its backward finds the winning edges by comparing their
/// values, made again, with the stored extremum: a value made again must have
/// the forward's bits. Only the ops of `forward` are followed.
static bool reachesExtremum(Value v, const DenseSet<Operation *> &forward) {
  auto extremum = [](ReduceKind k) {
    return k == ReduceKind::max || k == ReduceKind::min;
  };
  SmallVector<Value> work{v};
  DenseSet<Value> seen{v};
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (Operation *user : cur.getUsers()) {
      if (!forward.contains(user))
        continue;
      if (auto spmm = dyn_cast<SpmmOp>(user)) {
        if (extremum(spmm.getReduce()))
          return true;
        continue;
      }
      if (auto reduce = dyn_cast<ReduceOp>(user)) {
        if (extremum(reduce.getKind()))
          return true;
        continue;
      }
      for (Value r : user->getResults())
        if (isa<RankedTensorType>(r.getType()) && domainOf(r) == Domain::Edge &&
            seen.insert(r).second)
          work.push_back(r);
    }
  }
  return false;
}

/// Whether `op` gains a second result for the backward: an edge_softmax its
/// log-sum-exp (what the backward recomputes the weights from), an spmm or
/// reduce max/min its winner codes (which edges the backward routes the
/// gradient to).
static bool needsBackwardResult(Operation *op) {
  if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op))
    return !softmax.getLse();
  auto extremum = [](ReduceKind k) {
    return k == ReduceKind::max || k == ReduceKind::min;
  };
  if (auto spmm = dyn_cast<SpmmOp>(op))
    return !spmm.getWinner() && extremum(spmm.getReduce());
  auto reduce = dyn_cast<ReduceOp>(op);
  return reduce && !reduce.getWinner() && extremum(reduce.getKind());
}

/// Gives the ops of `which` in `ops` their backward result
/// (needsBackwardResult); returns the ops, updated.
static void addBackwardResults(SmallVectorImpl<Operation *> &ops,
                               const DenseSet<Operation *> &which) {
  for (Operation *&op : ops) {
    if (!which.contains(op) || !needsBackwardResult(op))
      continue;
    OpBuilder b(op);
    Operation *upgraded;
    if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op)) {
      auto alpha = cast<RankedTensorType>(softmax.getResult().getType());
      SmallVector<int64_t> shape(alpha.getShape());
      shape[0] = ShapedType::kDynamic;
      auto lseType =
          RankedTensorType::get(shape, arithmeticType(alpha.getElementType()));
      upgraded = EdgeSoftmaxOp::create(b, op->getLoc(),
                                       TypeRange{alpha, lseType},
                                       softmax.getGraph(), softmax.getInput(),
                                       softmax.getReversed());
    } else if (auto spmm = dyn_cast<SpmmOp>(op)) {
      auto type = cast<RankedTensorType>(spmm.getResult().getType());
      auto withCodes =
          SpmmOp::create(b, op->getLoc(), type, withArithmeticElements(type),
                         spmm.getReduce(), spmm.getGraph(), spmm.getInput(),
                         spmm.getWeights(), spmm.getReversed());
      // A gradient pulled along the edges needs only how many edges attain
      // each extremum, not which (a third fewer instructions per edge).
      if (!spmm.getWeights() && pullsExtremumGrads(type.getElementType()))
        withCodes.setCounted(true);
      upgraded = withCodes;
    } else {
      auto reduce = cast<ReduceOp>(op);
      auto type = cast<RankedTensorType>(reduce.getResult().getType());
      upgraded = ReduceOp::create(
          b, op->getLoc(), type, withArithmeticElements(type), reduce.getKind(),
          reduce.getGraph(), reduce.getInput(), reduce.getReversed());
    }
    upgraded->setAttrs(op->getDiscardableAttrDictionary());
    op->getResult(0).replaceAllUsesWith(upgraded->getResult(0));
    op->erase();
    op = upgraded;
  }
}

SmallVector<ResidualSource>
mlir::gnn::trimForwardResiduals(func::FuncOp fwd, unsigned numResults) {
  auto ret = cast<func::ReturnOp>(fwd.getBody().front().getTerminator());
  SmallVector<ResidualSource> sources;
  SmallVector<Value> kept;
  SmallVector<DictionaryAttr> keptAttrs;
  llvm::DenseMap<Value, ResidualSource> held;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (i < numResults) {
      held.try_emplace(v, ResidualSource{ResidualSource::Kind::Output,
                                         unsigned(i)});
      kept.push_back(v);
      keptAttrs.push_back(fwd.getResultAttrDict(i));
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      sources.push_back({ResidualSource::Kind::Argument, arg.getArgNumber()});
      continue;
    }
    auto [it, fresh] = held.try_emplace(
        v, ResidualSource{ResidualSource::Kind::Output, unsigned(kept.size())});
    sources.push_back(it->second);
    if (fresh) {
      kept.push_back(v);
      keptAttrs.push_back(fwd.getResultAttrDict(i));
    }
  }
  ret->setOperands(kept);
  fwd.setType(FunctionType::get(fwd.getContext(), fwd.getArgumentTypes(),
                                ValueRange(kept).getTypes()));
  fwd.removeResAttrsAttr();
  for (auto [i, attrs] : llvm::enumerate(keptAttrs))
    if (attrs)
      fwd.setResultAttrs(i, attrs);
  return sources;
}

FailureOr<TrainingFunctions>
mlir::gnn::differentiateForTraining(func::FuncOp func,
                                    const AutodiffOptions &options) {
  auto module = func->getParentOfType<ModuleOp>();
  for (StringRef suffix : {"_fwd", "_bwd"})
    if (module && module.lookupSymbol((func.getSymName() + suffix).str()))
      return func.emitOpError()
             << "cannot be differentiated: @" << func.getSymName() << suffix
             << " exists already";
  bool marked = false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    marked |= bool(func.getArgAttr(i, kDifferentiableAttrName));
  for (unsigned i = 0; i < func.getNumArguments() && !marked; ++i)
    if (isDifferentiable(func.getArgument(i)))
      func.setArgAttr(i, kDifferentiableAttrName,
                      UnitAttr::get(func.getContext()));
  if (failed(differentiate(func, options)))
    return failure();
  TrainingFunctions t;
  t.forward = module.lookupSymbol<func::FuncOp>(
      (func.getSymName() + "_fwd").str());
  t.backward = module.lookupSymbol<func::FuncOp>(
      (func.getSymName() + "_bwd").str());
  if (!t.forward || !t.backward)
    return func.emitOpError("internal: gnn-autodiff made no @")
           << func.getSymName() << "_fwd/_bwd";
  // What the rules built is checked here, where the reference evaluator
  // (which reads any types) would not, and before a GPU compile fails on it.
  for (func::FuncOp f : {t.forward, t.backward})
    if (failed(mlir::verify(f)))
      return func.emitOpError("internal: the derived @")
             << f.getSymName() << " does not verify";
  t.numResults = func.getNumResults();
  t.residuals = trimForwardResiduals(t.forward, t.numResults);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kDifferentiableAttrName))
      t.gradients.push_back(i);
  return t;
}

/// The scratch function: a copy of `func` placed after it whose entry block
/// takes one more argument per result gradient, returned in `dresults`.
static func::FuncOp makeScratch(func::FuncOp func,
                                SmallVectorImpl<Value> &dresults) {
  OpBuilder mb(func);
  mb.setInsertionPointAfter(func);
  auto tmp = cast<func::FuncOp>(mb.clone(*func));
  tmp.setSymName((func.getSymName() + "_autodiff_scratch").str());
  Block &body = tmp.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Value r : ret.getOperands())
    dresults.push_back(body.addArgument(r.getType(), func.getLoc()));
  return tmp;
}

/// Builds attention's weights again from the scores and the log-sum-exp of
/// `sm` (mapped by `map`): alpha = exp(s - lse[end]), 0 where the group has
/// no mass.
static Value buildSoftmaxWeights(OpBuilder &bb, Location loc, EdgeSoftmaxOp sm,
                                 const IRMapping &map) {
  Value s = map.lookupOrDefault(sm.getInput());
  Value lse = map.lookupOrDefault(sm.getLse());
  EdgeEnd end = sm.getReversed() ? EdgeEnd::src : EdgeEnd::dst;
  auto sType = cast<RankedTensorType>(s.getType());
  // The log-sum-exp is of the scores' arithmetic type (f32 for bf16 scores):
  // the weights are computed in it, and the kernels that read them keep
  // them so (gnn.rounds_on_store), as the forward's fused kernel did.
  auto lType = withArithmeticElements(sType);
  Value le =
      GatherOp::create(bb, loc, lType, end, map.lookup(sm.getGraph()), lse);
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < sType.getRank(); ++i)
    if (sType.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(bb, loc, s, i));
  Value init = tensor::EmptyOp::create(bb, loc, sType.getShape(),
                                       sType.getElementType(), dyn);
  SmallVector<AffineMap> maps(3, bb.getMultiDimIdentityMap(sType.getRank()));
  SmallVector<utils::IteratorType> iters(sType.getRank(),
                                         utils::IteratorType::parallel);
  auto weights = linalg::GenericOp::create(
      bb, loc, TypeRange{sType}, ValueRange{s, le}, ValueRange{init}, maps,
      iters, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Type t = lType.getElementType();
        Value score = a[0];
        if (score.getType() != t)
          score = arith::ExtFOp::create(nb, nl, t, score);
        Value ninf =
            arith::ConstantOp::create(nb, nl, nb.getFloatAttr(t, -INFINITY));
        Value zero = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(t, 0.0));
        Value e = math::ExpOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, score, a[1]));
        Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                           a[1], ninf);
        Value w = arith::SelectOp::create(nb, nl, none, zero, e);
        if (w.getType() != sType.getElementType())
          w = arith::TruncFOp::create(nb, nl, sType.getElementType(), w);
        linalg::YieldOp::create(nb, nl, ValueRange{w});
      });
  if (isStorageFloatType(sType.getElementType()))
    weights->setAttr(kRoundsOnStoreAttrName, bb.getUnitAttr());
  return weights.getResult(0);
}

namespace {
/// Differentiating one function: its scratch copy (the forward ops, then the
/// backward ops built before its return), what the forward makes active, and
/// what the two functions it is split into pass between them. Each step
/// reads what the steps before it found, in the order `differentiate` calls
/// them.
class Differentiation {
public:
  /// `scratch` is a copy of `func` whose entry block takes one more argument
  /// per result gradient: `dresults`.
  Differentiation(func::FuncOp func, func::FuncOp scratch,
                  SmallVector<Value> dresults, const AutodiffOptions &options);

  /// Finds the active values (those depending on a differentiable argument)
  /// and the ops computing them, and lists the forward ops.
  void findActive();
  /// Gives the forward ops what the backward recomputes or routes from:
  /// each softmax its log-sum-exp (to recompute attention's weights), each
  /// active spmm or reduce max/min its tie counts (to share an extremum's
  /// gradient), counted by its forward kernel; then finds the active values
  /// again.
  void upgradeForBackward();
  /// Builds each active op's VJP in reverse order before the return, summing
  /// the gradients of values used several times, and the gradient of each
  /// differentiable argument (zeros where none flows). Fails on an active op
  /// without a derivative rule.
  LogicalResult buildGradients();
  /// Keeps the backward ops an argument gradient depends on, and notes the
  /// values they read.
  void findLive();
  /// Sizes read from forward values: a static size becomes a constant, a
  /// dynamic leading size (nodes or edges) is read from a result gradient of
  /// the same domain (with one graph), so that no tensor is kept for its
  /// shape alone.
  void replaceForwardSizes();
  /// The residuals in a stable order (arguments, then forward results in
  /// program order) and the constants the backward makes again instead.
  void findResiduals();
  /// Edge-sized values computed by the forward are made again in the
  /// backward from node-sized ones (the default residual policy): their ops
  /// are cloned into @f_bwd, and attention's weights come back as
  /// exp(s - lse[dst]) from the scores and the softmax's log-sum-exp, so
  /// that nothing edge-sized but the function's own edge arguments is kept
  /// between the two. Scalars are always made again.
  void planRecomputation();
  /// Builds @f_fwd after `func`: the forward ops, returning the results then
  /// the residuals.
  func::FuncOp buildForward();
  /// Declares @f_bwd after `fwd`: graphs, residuals, result gradients ->
  /// argument gradients.
  func::FuncOp declareBackward(func::FuncOp fwd);
  /// Fills @f_bwd: the constants, the recomputed forward ops, then the live
  /// backward ops.
  void buildBackward(func::FuncOp bwd);

private:
  /// Notes every value `op` and the ops in its regions read as needed.
  void markNeeded(Operation *op);
  /// Replaces `dim`, a size of a forward value, as replaceForwardSizes says;
  /// returns whether it did.
  bool replaceForwardSize(tensor::DimOp dim, unsigned numGraphs);
  /// What an op that is made again reads: a constant is made again too, a
  /// forward edge value (under the default policy) or scalar is queued on
  /// `work` to be made again, anything else not made again is a residual.
  void recomputeOperand(Value operand, SmallVectorImpl<Value> &work);

  func::FuncOp func;
  const AutodiffOptions &options;
  Location loc;
  MLIRContext *ctx;
  /// The differentiable arguments.
  SmallVector<unsigned> wrt;
  Block &body;
  func::ReturnOp ret;
  /// The result gradients: the scratch function's extra arguments.
  SmallVector<Value> dresults;

  DenseSet<Value> active;
  /// The forward ops in program order, and those of them that are active.
  SmallVector<Operation *> forward;
  DenseSet<Operation *> activeOps;
  /// Positions in `forward` of the ops upgradeForBackward gave a result.
  SmallVector<unsigned> upgradedAt;
  /// One gradient per differentiable argument.
  SmallVector<Value> outs;

  DenseSet<Operation *> forwardOps;
  /// The backward ops an argument gradient depends on, in program order, and
  /// the values they read.
  SmallVector<Operation *> live;
  DenseSet<Value> needed;
  /// The forward values @f_fwd passes to @f_bwd, the graph arguments, the
  /// constants and the forward ops @f_bwd makes again.
  llvm::SetVector<Value> residuals;
  SmallVector<Value> graphs;
  SmallVector<Operation *> constants;
  DenseSet<Operation *> recompute;
};
} // namespace

Differentiation::Differentiation(func::FuncOp func, func::FuncOp scratch,
                                 SmallVector<Value> dresults,
                                 const AutodiffOptions &options)
    : func(func), options(options), loc(func.getLoc()), ctx(func.getContext()),
      body(scratch.getBody().front()),
      ret(cast<func::ReturnOp>(body.getTerminator())),
      dresults(std::move(dresults)) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kDifferentiableAttrName)) {
      // The gnn dialect's argument-attribute verifier allows the attribute
      // on float tensors only.
      assert(isDifferentiable(func.getArgument(i)) &&
             "gnn.differentiable marks float tensors");
      wrt.push_back(i);
    }
}

void Differentiation::findActive() {
  active.clear();
  forward.clear();
  activeOps.clear();
  for (unsigned i : wrt)
    active.insert(body.getArgument(i));
  for (Operation &op : body.without_terminator()) {
    forward.push_back(&op);
    bool on = false;
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        on |= active.contains(v);
    });
    if (on) {
      activeOps.insert(&op);
      for (Value r : op.getResults())
        active.insert(r);
    }
  }
}

void Differentiation::upgradeForBackward() {
  for (auto [i, op] : llvm::enumerate(forward)) {
    if (!needsBackwardResult(op))
      continue;
    // Every softmax, active or not: an inactive one's weights may be read
    // by the backward too (and are then recomputed the same way).
    if (isa<EdgeSoftmaxOp>(op) ? !options.storeEdgeValues
                               : activeOps.contains(op))
      upgradedAt.push_back(i);
  }
  if (!upgradedAt.empty()) {
    DenseSet<Operation *> which;
    for (unsigned i : upgradedAt)
      which.insert(forward[i]);
    addBackwardResults(forward, which);
    findActive();
  }
}

LogicalResult Differentiation::buildGradients() {
  OpBuilder b(ret);
  DenseMap<Value, Value> grads;
  auto addGrad = [&](Value v, Value g) {
    if (!g || !active.contains(v) || !isDifferentiable(v))
      return;
    Value &slot = grads[v];
    slot = slot ? buildSum(b, loc, slot, g) : g;
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
  for (unsigned i : wrt) {
    Value arg = body.getArgument(i);
    Value g = grads.lookup(arg);
    outs.push_back(g ? g : buildZerosLike(b, loc, arg));
  }
  return success();
}

void Differentiation::markNeeded(Operation *op) {
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      needed.insert(v);
  });
}

void Differentiation::findLive() {
  forwardOps.insert(forward.begin(), forward.end());
  SmallVector<Operation *> backward;
  for (Operation *op = &body.front(); op != ret; op = op->getNextNode())
    if (!forwardOps.contains(op))
      backward.push_back(op);
  needed.insert(outs.begin(), outs.end());
  for (Operation *op : llvm::reverse(backward)) {
    bool used = llvm::any_of(op->getResults(),
                             [&](Value r) { return needed.contains(r); });
    if (!used)
      continue;
    live.push_back(op);
    markNeeded(op);
  }
  std::reverse(live.begin(), live.end());
}

bool Differentiation::replaceForwardSize(tensor::DimOp dim,
                                         unsigned numGraphs) {
  Value src = dim.getSource();
  Operation *def = src.getDefiningOp();
  bool fromForward = (def && forwardOps.contains(def)) ||
                     (isa<BlockArgument>(src) &&
                      cast<BlockArgument>(src).getOwner() == &body &&
                      !llvm::is_contained(dresults, src));
  std::optional<int64_t> index = dim.getConstantIndex();
  auto type = dyn_cast<RankedTensorType>(src.getType());
  if (!fromForward || !index || !type || *index >= type.getRank())
    return false;
  if (!type.isDynamicDim(*index)) {
    OpBuilder cb(dim);
    auto size = arith::ConstantIndexOp::create(cb, dim.getLoc(),
                                               type.getDimSize(*index));
    dim.replaceAllUsesWith(size.getResult());
    // A size read by a backward op itself (not inside its region, which is
    // cloned whole) is made again in @f_bwd like the forward's constants.
    if (size->getBlock() == &body)
      constants.push_back(size);
    return true;
  }
  // A node or edge count is the same in any tensor of that domain only when
  // there is one graph.
  Domain d = domainOf(src);
  if (*index != 0 || d == Domain::Unknown || numGraphs != 1)
    return false;
  for (Value g : dresults)
    if (auto gt = dyn_cast<RankedTensorType>(g.getType());
        gt && gt.getRank() >= 1 && gt.isDynamicDim(0) &&
        domainOf(ret.getOperand(llvm::find(dresults, g) - dresults.begin())) ==
            d) {
      dim.getSourceMutable().assign(g);
      return true;
    }
  // Else an argument of that domain the backward reads anyway (an edge
  // weight): an edge tensor recomputed only for its edge count (RGCN's
  // relation gather of the [N, R, C] rows) is then neither recomputed nor
  // kept for the backward.
  for (BlockArgument a : body.getArguments()) {
    // (The function's own arguments: not the result gradients the body
    // has as arguments too.)
    auto at = dyn_cast<RankedTensorType>(a.getType());
    if (a != src && at && at.getRank() >= 1 && at.isDynamicDim(0) &&
        !llvm::is_contained(dresults, a) &&
        a.getArgNumber() < func.getNumArguments() && needed.contains(a) &&
        domainOf(a) == d) {
      dim.getSourceMutable().assign(a);
      return true;
    }
  }
  return false;
}

void Differentiation::replaceForwardSizes() {
  unsigned numGraphs = llvm::count_if(func.getArgumentTypes(), [](Type t) {
    return isa<mlir::gnn::GraphType>(t);
  });
  bool rewrote = false;
  for (Operation *op : live)
    op->walk([&](tensor::DimOp dim) {
      rewrote |= replaceForwardSize(dim, numGraphs);
    });
  if (rewrote) {
    needed.clear();
    needed.insert(outs.begin(), outs.end());
    for (Operation *op : live)
      markNeeded(op);
  }
}

void Differentiation::findResiduals() {
  DenseSet<Operation *> liveSet(live.begin(), live.end());
  auto isBackward = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && liveSet.contains(def);
  };
  auto isResultGrad = [&](Value v) { return llvm::is_contained(dresults, v); };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Value a = body.getArgument(i);
    if (isa<mlir::gnn::GraphType>(a.getType()))
      graphs.push_back(a);
    else if (needed.contains(a))
      residuals.insert(a);
  }
  for (Operation *op : forward)
    for (Value r : op->getResults())
      if (needed.contains(r) && !isa<mlir::gnn::GraphType>(r.getType()))
        residuals.insert(r);
  // Region-internal values (inside linalg bodies) are not residuals; values
  // defined by backward ops or result gradients are not either.
  // Constants are made again in the backward function rather than passed.
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
}

void Differentiation::recomputeOperand(Value operand,
                                       SmallVectorImpl<Value> &work) {
  if (isa<mlir::gnn::GraphType>(operand.getType()))
    return;
  Operation *producer = operand.getDefiningOp();
  if (producer && producer->hasTrait<OpTrait::ConstantLike>()) {
    if (!llvm::is_contained(constants, producer))
      constants.push_back(producer);
    return;
  }
  bool edge = !options.storeEdgeValues &&
              isa<RankedTensorType>(operand.getType()) &&
              domainOf(operand) == Domain::Edge;
  bool size = !isa<ShapedType>(operand.getType());
  if (producer && forwardOps.contains(producer) && (edge || size))
    work.push_back(operand);
  else if (!(producer && recompute.contains(producer)))
    residuals.insert(operand);
}

void Differentiation::planRecomputation() {
  // Scalars are always made again (a function passes tensors only); edge
  // values too under the default policy.
  SmallVector<Value> work;
  for (Value r : residuals)
    if (r.getDefiningOp() &&
        (!isa<ShapedType>(r.getType()) ||
         (!options.storeEdgeValues && domainOf(r) == Domain::Edge)))
      work.push_back(r);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || !forwardOps.contains(def) || recompute.contains(def))
      continue;
    // Attention's weights made again are exp(s - lse), not the forward's
    // bits (its online softmax's exp(s - m) / l): where a max/min compares
    // them (or values made from them) with its stored extremum, they are
    // kept from the forward instead.
    if (!isRecomputable(def) ||
        (isa<EdgeSoftmaxOp>(def) && v == def->getResult(0) &&
         reachesExtremum(v, forwardOps))) {
      residuals.insert(v);
      continue;
    }
    recompute.insert(def);
    for (Value r : def->getResults())
      residuals.remove(r);
    if (auto sm = dyn_cast<EdgeSoftmaxOp>(def)) {
      recomputeOperand(sm.getInput(), work);
      residuals.insert(sm.getLse());
      continue;
    }
    def->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        bool outside =
            !(producer && def->isAncestor(producer)) &&
            !(isa<BlockArgument>(operand) &&
              def->isAncestor(
                  cast<BlockArgument>(operand).getOwner()->getParentOp()));
        if (outside)
          recomputeOperand(operand, work);
      }
    });
  }
  // Values of recomputed ops that an earlier step made residuals.
  // (A recomputed softmax's log-sum-exp is what it is recomputed from.)
  residuals.remove_if([&](Value v) {
    Operation *def = v.getDefiningOp();
    auto sm = dyn_cast_or_null<EdgeSoftmaxOp>(def);
    return def && recompute.contains(def) && !(sm && v == sm.getLse());
  });
  // Constants in forward order, like the rest.
  llvm::sort(constants,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
}

func::FuncOp Differentiation::buildForward() {
  OpBuilder mb(func);
  mb.setInsertionPointAfter(func);
  auto fwd = cast<func::FuncOp>(mb.clone(*func));
  fwd.setSymName((func.getSymName() + "_fwd").str());
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
  if (!upgradedAt.empty()) {
    SmallVector<Operation *> fops;
    for (Operation &op : fb.without_terminator())
      fops.push_back(&op);
    DenseSet<Operation *> which;
    for (unsigned i : upgradedAt)
      which.insert(fops[i]);
    addBackwardResults(fops, which);
    for (auto [a, c] : llvm::zip(forward, fops))
      for (auto [x, y] : llvm::zip(a->getResults(), c->getResults()))
        map.map(x, y);
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
  return fwd;
}

func::FuncOp Differentiation::declareBackward(func::FuncOp fwd) {
  OpBuilder mb(fwd);
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
  return bwd;
}

void Differentiation::buildBackward(func::FuncOp bwd) {
  Block *entry = bwd.addEntryBlock();
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
  for (Operation *op : forward) {
    if (!recompute.contains(op))
      continue;
    if (auto sm = dyn_cast<EdgeSoftmaxOp>(op))
      map.map(sm.getResult(), buildSoftmaxWeights(bb, loc, sm, map));
    else
      bb.clone(*op, map);
  }
  for (Operation *op : live)
    bb.clone(*op, map);
  SmallVector<Value> results;
  for (Value g : outs)
    results.push_back(map.lookupOrDefault(g));
  func::ReturnOp::create(bb, loc, results);
}

LogicalResult mlir::gnn::differentiate(func::FuncOp func,
                                       const AutodiffOptions &options) {
  if (func.isDeclaration())
    return func.emitOpError("cannot be differentiated: it has no body");
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("cannot be differentiated: expects one block");
  SmallVector<Value> dresults;
  func::FuncOp scratch = makeScratch(func, dresults);
  llvm::scope_exit cleanup([&] { scratch.erase(); });
  Differentiation d(func, scratch, std::move(dresults), options);
  d.findActive();
  d.upgradeForBackward();
  if (failed(d.buildGradients()))
    return failure();
  d.findLive();
  d.replaceForwardSizes();
  d.findResiduals();
  d.planRecomputation();
  func::FuncOp fwd = d.buildForward();
  d.buildBackward(d.declareBackward(fwd));
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
      AutodiffOptions options;
      options.storeEdgeValues = storeEdgeValues;
      if (failed(differentiate(f, options)))
        return signalPassFailure();
    }
  }
};
} // namespace
