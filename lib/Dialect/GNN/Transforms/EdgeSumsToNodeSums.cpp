//===- EdgeSumsToNodeSums.cpp - sums over all edges as sums over nodes ----===//
//
// Part of gnnc. A sum over every edge of an edge tensor (a parameter
// gradient such as GATv2's d`att`) becomes a per-destination `gnn.reduce
// sum` followed by a sum over nodes, so that gnn-form-kernel-groups can fuse
// the edge values into the reduce and nothing edge-sized is written.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/GemmBias.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNEDGESUMSTONODESUMS
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

/// The graph of the graph op that produces `edges` (through elementwise ops
/// on edge values), or null.
static Value graphOfEdges(Value edges) {
  SmallVector<Value> worklist = {edges};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (auto gather = dyn_cast<GatherOp>(def))
      return gather.getGraph();
    if (auto sddmm = dyn_cast<SddmmOp>(def))
      return sddmm.getGraph();
    if (auto softmax = dyn_cast<EdgeSoftmaxOp>(def))
      return softmax.getGraph();
    if (auto generic = dyn_cast<linalg::GenericOp>(def))
      for (OpOperand *in : generic.getDpsInputOperands())
        worklist.push_back(in->get());
  }
  return Value();
}

namespace {
/// Rewrites a sum over all edges into a small static tensor:
///
///   %r = linalg.generic {iterators = [parallel..., reduction (the edge)]}
///       ins(%e...: edge tensors read at [edge, ...], dense tensors)
///       outs(%init) { out + term }
///
/// becomes the per-edge terms, their sum per destination node and the sum
/// of those over the nodes (every edge has exactly one destination, so the
/// total is the same; nodes without in-edges add 0):
///
///   %t = linalg.generic {all parallel, edge loop first} ins(%e...)
///       outs(tensor.empty(E, ...)) { term }
///   %n = gnn.reduce sum %g, %t : tensor<?x...> -> tensor<?x...>
///   %r = linalg.generic {iterators = [parallel..., reduction (the node)]}
///       ins(%n) outs(%init) { out + in }
///
/// `%g` is the graph of the graph op producing an edge operand. Both sums are
/// deterministic (a row kernel, then a block reduction).
struct EdgeSumToNodeSum : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op->getNumResults() != 1 || op.getNumReductionLoops() != 1 ||
        op.hasIndexSemantics())
      return rewriter.notifyMatchFailure(op, "not a single sum");
    // A bias gradient whose edge values a weight gradient's GEMM reads
    // anyway: its row split sums them too (no pass of their own).
    if (gemmRowSumsOf(op))
      return rewriter.notifyMatchFailure(op, "summed by a GEMM's row split");
    auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!outType || !outType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "result not static");
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    unsigned numLoops = iters.size();
    unsigned edgeLoop = 0;
    while (iters[edgeLoop] != utils::IteratorType::reduction)
      ++edgeLoop;
    // The result: out + term, out used once.
    Block &body = op.getRegion().front();
    BlockArgument out = body.getArgument(op.getNumDpsInputs());
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
    if (!add || !out.hasOneUse() || (add.getLhs() != out && add.getRhs() != out))
      return rewriter.notifyMatchFailure(op, "not out + term");
    Value term = add.getLhs() == out ? add.getRhs() : add.getLhs();
    // The result is written at the parallel loops, each once, in any order,
    // and at 0 in dimensions of size 1 (AGNN's beta: `tensor<1xf32>` at
    // `(d0) -> (0)`). `loopSizes` are the parallel loops' sizes in the order
    // the result names them.
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    SmallVector<int64_t> loopSizes;
    llvm::SmallBitVector named(numLoops);
    for (auto [r, e] : llvm::enumerate(outMap.getResults())) {
      if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        if (c.getValue() != 0 || outType.getDimSize(r) != 1)
          return rewriter.notifyMatchFailure(op, "result at a constant "
                                                 "position other than 0 of 1");
        continue;
      }
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d || iters[d.getPosition()] != utils::IteratorType::parallel ||
          named.test(d.getPosition()))
        return rewriter.notifyMatchFailure(op, "result not at the parallel "
                                               "loops");
      named.set(d.getPosition());
      loopSizes.push_back(outType.getDimSize(r));
    }
    if (loopSizes.size() != numLoops - 1)
      return rewriter.notifyMatchFailure(op, "a parallel loop the result does "
                                             "not name");
    // Every operand that the edge loop indexes is an edge tensor whose rows
    // it indexes, and no other position.
    DomainCache domains;
    MLIRContext *ctx = op.getContext();
    AffineExpr edgeDim = getAffineDimExpr(edgeLoop, ctx);
    Value edgeTensor, graph;
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      for (auto [r, e] : llvm::enumerate(map.getResults())) {
        if (!e.isFunctionOfDim(edgeLoop))
          continue;
        if (r != 0 || e != edgeDim ||
            domains.lookup(in->get()).domain != Domain::Edge)
          return rewriter.notifyMatchFailure(op, "edge loop not over rows of "
                                                 "an edge tensor");
        if (!graph)
          graph = graphOfEdges(in->get());
        edgeTensor = in->get();
      }
    }
    if (!edgeTensor || !graph)
      return rewriter.notifyMatchFailure(op, "no edge tensor from a graph op");

    Location loc = op.getLoc();
    // Loop renumbering: the edge loop first, then the result's loops in the
    // order it names them.
    SmallVector<AffineExpr> renumber(numLoops);
    renumber[edgeLoop] = getAffineDimExpr(0, ctx);
    unsigned next = 1;
    for (AffineExpr e : outMap.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        renumber[d.getPosition()] = getAffineDimExpr(next++, ctx);
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands())
      maps.push_back(op.getMatchingIndexingMap(in).replaceDimsAndSymbols(
          renumber, {}, numLoops, 0));
    maps.push_back(AffineMap::getMultiDimIdentityMap(numLoops, ctx));
    // The per-edge terms, and so the per-node sums, in the arithmetic type
    // (f32 for a bf16 or f16 result): a node's sum crosses kernels, and
    // rounding it to the storage type would round every node's share of
    // the total (the sum over the nodes cancels).
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    llvm::append_range(shape, loopSizes);
    Type element = outType.getElementType();
    Type arith = arithmeticType(element);
    auto termType = RankedTensorType::get(shape, arith);
    Value edges = tensor::DimOp::create(rewriter, loc, edgeTensor, 0);
    Value empty = tensor::EmptyOp::create(rewriter, loc, termType,
                                          ValueRange{edges});
    SmallVector<utils::IteratorType> parallel(numLoops,
                                              utils::IteratorType::parallel);
    auto terms = linalg::GenericOp::create(
        rewriter, loc, TypeRange{termType}, op.getDpsInputs(),
        ValueRange{empty}, maps, parallel);
    IRMapping mapping;
    SmallVector<Type> argTypes(body.getArgumentTypes());
    argTypes.back() = arith;
    Block *termBody = rewriter.createBlock(
        &terms.getRegion(), {}, argTypes,
        SmallVector<Location>(body.getNumArguments(), loc));
    for (auto [from, to] :
         llvm::zip(body.getArguments(), termBody->getArguments()))
      mapping.map(from, to);
    for (Operation &inner : body.without_terminator())
      if (&inner != add.getOperation())
        rewriter.clone(inner, mapping);
    // The term widened: a term the body rounded to the result's type only to
    // add it (`out + truncf(t)`) is `t` itself.
    Value widened = mapping.lookupOrDefault(term);
    if (auto trunc = widened.getDefiningOp<arith::TruncFOp>();
        trunc && trunc.getIn().getType() == arith)
      widened = trunc.getIn();
    else if (widened.getType() != arith)
      widened = arith::ExtFOp::create(rewriter, loc, arith, widened);
    linalg::YieldOp::create(rewriter, loc, widened);
    rewriter.setInsertionPoint(op);
    // Per destination node, then over the nodes.
    Value perNode = ReduceOp::create(rewriter, loc, termType, /*winner=*/Type(),
                                     ReduceKind::sum, graph,
                                     terms.getResult(0), /*reversed=*/false)
                        .getResult();
    SmallVector<AffineExpr> nodeRead = {getAffineDimExpr(numLoops - 1, ctx)};
    for (unsigned i = 0; i + 1 < numLoops; ++i)
      nodeRead.push_back(getAffineDimExpr(i, ctx));
    // The result's map over the new loops: its parallel loops renumbered in
    // the order it names them, its constant positions kept.
    SmallVector<AffineExpr> resultAt;
    unsigned loop = 0;
    for (AffineExpr e : outMap.getResults())
      resultAt.push_back(isa<AffineDimExpr>(e) ? getAffineDimExpr(loop++, ctx)
                                               : e);
    SmallVector<AffineMap> sumMaps = {
        AffineMap::get(numLoops, 0, nodeRead, ctx),
        AffineMap::get(numLoops, 0, resultAt, ctx)};
    SmallVector<utils::IteratorType> sumIters(numLoops - 1,
                                              utils::IteratorType::parallel);
    sumIters.push_back(utils::IteratorType::reduction);
    // The init is written where the original wrote it.
    Value init = op.getDpsInitOperand(0)->get();
    auto nodeSum = rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, TypeRange{outType}, ValueRange{perNode}, ValueRange{init}, sumMaps,
        sumIters, [&](OpBuilder &b, Location l, ValueRange args) {
          // out + the node's sum in out's type (the kernels accumulate it
          // widened: gnn.rounds_on_store makes this conversion the result's
          // own rounding).
          Value term = args[0];
          if (term.getType() != element)
            term = arith::TruncFOp::create(b, l, element, term);
          Value sum = arith::AddFOp::create(b, l, args[1], term);
          linalg::YieldOp::create(b, l, sum);
        });
    if (element != arith)
      nodeSum->setAttr(kRoundsOnStoreAttrName, rewriter.getUnitAttr());
    return success();
  }
};

struct EdgeSumsToNodeSums
    : public mlir::gnn::impl::GNNEdgeSumsToNodeSumsBase<EdgeSumsToNodeSums> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateEdgeSumsToNodeSumsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void mlir::gnn::populateEdgeSumsToNodeSumsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<EdgeSumToNodeSum>(patterns.getContext());
}
