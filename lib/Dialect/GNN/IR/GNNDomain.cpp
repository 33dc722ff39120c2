//===- GNNDomain.cpp - node and edge tensors ------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/IndexingMapOpInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

using namespace mlir;
using namespace mlir::gnn;

llvm::StringRef mlir::gnn::stringifyDomain(Domain domain) {
  switch (domain) {
  case Domain::Node:
    return "node";
  case Domain::Edge:
    return "edge";
  case Domain::Src:
    return "src";
  case Domain::Dst:
    return "dst";
  case Domain::Unknown:
    return "unknown";
  }
  return "unknown";
}

std::optional<Domain> mlir::gnn::parseDomain(llvm::StringRef name) {
  for (Domain d : {Domain::Node, Domain::Edge, Domain::Src, Domain::Dst})
    if (name == stringifyDomain(d))
      return d;
  return std::nullopt;
}

bool mlir::gnn::isBipartite(Value graph) {
  auto type = dyn_cast<mlir::gnn::GraphType>(graph.getType());
  return type && type.getBipartite();
}

Domain mlir::gnn::nodeSide(Value graph, bool destination, bool reversed) {
  if (!isBipartite(graph))
    return Domain::Node;
  return destination != reversed ? Domain::Dst : Domain::Src;
}

namespace {
/// A domain and where it was read from.
using Answer = DomainSource;

/// One step of the inference: either the answer, or the values whose
/// domain the value shares, most telling first.
struct Step {
  std::optional<Answer> answer;
  SmallVector<Value, 4> from;
};
} // namespace

/// The domain of a block argument: a function argument's `gnn.domain`; a
/// tensor argument without one whose leading dimension is dynamic has one row
/// per node, which is how the tools bind it (`resolveArguments`).
static Answer inferArgument(BlockArgument arg) {
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.getFunctionBody().front())
    return {};
  auto attr = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kDomainAttrName);
  if (!attr) {
    auto tensor = cast<RankedTensorType>(arg.getType());
    if (tensor.getRank() >= 1 && tensor.isDynamicDim(0))
      return {Domain::Node, nullptr, arg, /*byDefault=*/true};
    return {};
  }
  if (std::optional<Domain> d = parseDomain(attr.getValue()))
    return {*d, nullptr, arg, false};
  return {};
}

/// For a structured op (linalg) result: the result row `i` is the iteration
/// point `d` mapped to it; any operand whose leading index is the same loop
/// dimension has the same domain.
static Step stepStructured(Operation *op, OpResult result) {
  Step step;
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  auto indexed = dyn_cast<IndexingMapOpInterface>(op);
  OpOperand *init = dps && indexed ? dps.getTiedOpOperand(result) : nullptr;
  if (!init) {
    step.answer = Answer();
    return step;
  }
  AffineMap initMap = indexed.getMatchingIndexingMap(init);
  if (initMap.getNumResults() == 0) {
    step.answer = Answer();
    return step;
  }
  AffineExpr lead = initMap.getResult(0);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = indexed.getMatchingIndexingMap(&operand);
    if (map.getNumResults() == 0 || map.getResult(0) != lead)
      continue;
    step.from.push_back(operand.get());
  }
  return step;
}

/// A reshape keeps the domain when its first reassociation group is the
/// leading dimension alone.
template <typename ReshapeOp>
static Step stepReshape(ReshapeOp op) {
  Step step;
  auto groups = op.getReassociationIndices();
  if (groups.empty() || groups.front().size() != 1)
    step.answer = Answer();
  else
    step.from.push_back(op.getSrc());
  return step;
}

/// What `value`'s domain is read from, looking at its producer only.
static Step stepOf(Value value) {
  Step step;
  if (!isa<RankedTensorType>(value.getType())) {
    step.answer = Answer();
    return step;
  }
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    step.answer = inferArgument(arg);
    return step;
  }
  Operation *op = value.getDefiningOp();
  Domain fixed = Domain::Unknown;
  if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op))
    fixed = value == softmax.getLse()
                ? nodeSide(softmax.getGraph(), true, softmax.getReversed())
                : Domain::Edge;
  else if (isa<GatherOp, SddmmOp>(op))
    fixed = Domain::Edge;
  else if (auto spmm = dyn_cast<SpmmOp>(op))
    fixed = nodeSide(spmm.getGraph(), true, spmm.getReversed());
  else if (auto reduce = dyn_cast<ReduceOp>(op))
    fixed = nodeSide(reduce.getGraph(), true, reduce.getReversed());
  else if (auto degree = dyn_cast<DegreeOp>(op))
    fixed = nodeSide(degree.getGraph(), true, degree.getReversed());
  else if (auto grad = dyn_cast<ExtremumGradOp>(op))
    // The gradient of the aggregation's input: its sources' rows.
    fixed = nodeSide(grad.getGraph(), false, grad.getReversed());
  if (fixed != Domain::Unknown) {
    step.answer = Answer{fixed, op, Value(), false};
    return step;
  }
  // A kernel group's result is what its body yields.
  if (auto group = dyn_cast<KernelGroupOp>(op)) {
    step.from.push_back(
        group.getYield().getValues()[cast<OpResult>(value).getResultNumber()]);
    return step;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return stepReshape(expand);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return stepReshape(collapse);
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    step.from.push_back(cast.getSource());
    return step;
  }
  // An empty tensor sized by the rows of another (`tensor.dim %v, 0`, as
  // the zeros autodiff makes for a gradient) has `v`'s rows.
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    auto type = cast<RankedTensorType>(empty.getType());
    if (type.getRank() > 0 && type.isDynamicDim(0))
      if (auto dim = empty.getDynamicSize(0).getDefiningOp<tensor::DimOp>())
        if (std::optional<int64_t> index = dim.getConstantIndex();
            index && *index == 0) {
          step.from.push_back(dim.getSource());
          return step;
        }
    step.answer = Answer();
    return step;
  }
  return stepStructured(op, cast<OpResult>(value));
}

std::optional<Domain> mlir::gnn::operandDomain(OpOperand &use) {
  Operation *op = use.getOwner();
  unsigned n = use.getOperandNumber();
  if (auto gather = dyn_cast<GatherOp>(op))
    if (n == gather.getInputMutable().getOperandNumber())
      return nodeSide(gather.getGraph(), gather.getEnd() == EdgeEnd::dst,
                      false);
  if (auto sddmm = dyn_cast<SddmmOp>(op)) {
    if (n == sddmm.getLhsMutable().getOperandNumber())
      return nodeSide(sddmm.getGraph(), false, sddmm.getReversed());
    if (n == sddmm.getRhsMutable().getOperandNumber())
      return nodeSide(sddmm.getGraph(), true, sddmm.getReversed());
  }
  if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op))
    if (n == softmax.getInputMutable().getOperandNumber())
      return Domain::Edge;
  if (auto spmm = dyn_cast<SpmmOp>(op)) {
    if (n == spmm.getInputMutable().getOperandNumber())
      return nodeSide(spmm.getGraph(), false, spmm.getReversed());
    if (n != spmm.getGraphMutable().getOperandNumber())
      return Domain::Edge; // the weights
  }
  if (auto reduce = dyn_cast<ReduceOp>(op))
    if (n == reduce.getInputMutable().getOperandNumber())
      return Domain::Edge;
  if (auto grad = dyn_cast<ExtremumGradOp>(op)) {
    // The aggregation's input (source rows); its extremum, winners and
    // output gradient (destination rows).
    if (n == grad.getInputMutable().getOperandNumber())
      return nodeSide(grad.getGraph(), false, grad.getReversed());
    if (n != grad.getGraphMutable().getOperandNumber())
      return nodeSide(grad.getGraph(), true, grad.getReversed());
  }
  return std::nullopt;
}

/// Whether `a` comes before `b` in program order (a pre-order walk), where
/// neither contains the other: compares their ancestors in a common block.
static bool isBeforeInProgram(Operation *a, Operation *b) {
  SmallVector<Operation *, 4> chain;
  for (Operation *o = a; o; o = o->getParentOp())
    chain.push_back(o);
  for (Operation *o = b; o; o = o->getParentOp()) {
    Block *block = o->getBlock();
    if (!block)
      return false;
    for (Operation *x : chain)
      if (x->getBlock() == block)
        return x != o && x->isBeforeInBlock(o);
  }
  return false;
}

/// For the verifier of `user`: the domain that a graph op before `user` in
/// program order requires of `value`. That op's verifier checks it, and it comes
/// earlier in program order (a total order, so the reliance is well-founded:
/// by induction on it, every requirement holds once every verifier passed);
/// it keeps verification linear when many graph ops read one long chain,
/// also across kernel groups.
/// Looks at a few uses only (a tensor.empty may have thousands).
static std::optional<Answer> requiredEarlier(Value value, Operation *user) {
  int budget = 8;
  for (OpOperand &use : value.getUses()) {
    if (--budget < 0)
      break;
    Operation *owner = use.getOwner();
    if (owner == user || !isBeforeInProgram(owner, user))
      continue;
    if (std::optional<Domain> d = operandDomain(use))
      return Answer{*d, owner, Value(), false};
  }
  return std::nullopt;
}

/// The domain of `root`: the first value it is read from whose domain the IR
/// states, else the first one with a default domain; none (mixed) when it is
/// read from tensors of two domains (node and edge, or the two sides of a
/// bipartite graph). Each value is looked at
/// once (memoised, with an explicit stack), so the cost is linear in the IR
/// above `root` however many paths lead through it, and deep chains do not
/// grow the native stack.
static Answer inferAnswer(Value root, DomainCache::Memo &memo,
                          Operation *user = nullptr) {
  struct Frame {
    Value value;
    SmallVector<Value, 4> from;
    unsigned next = 0;
    std::optional<Answer> stated, fallback;
    /// The known domains of the sources, as bits (1 << Domain).
    unsigned seen = 0;
    Operation *mixedAt = nullptr;
    bool expanded = false;
  };
  // A value is in `memo` from the time it is expanded; `done` tells whether
  // its answer is final (a value met again before that is on a cycle, which
  // only unverified IR has, and counts as unknown). Every value expanded is
  // done when the stack is empty, so `memo` may serve later calls.
  SmallVector<Frame> stack;
  stack.push_back({root});
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (!frame.expanded) {
      if (memo.count(frame.value)) {
        stack.pop_back();
        continue;
      }
      std::optional<Answer> earlier =
          user ? requiredEarlier(frame.value, user) : std::nullopt;
      Step step = earlier ? Step{earlier, {}} : stepOf(frame.value);
      if (step.answer) {
        memo[frame.value] = {*step.answer, true};
        stack.pop_back();
        continue;
      }
      memo[frame.value] = {Answer(), false};
      frame.from = std::move(step.from);
      frame.expanded = true;
    }
    // Look at every source: the first stated domain wins over a default
    // one, and sources on both index sets (or a mixed source) make the
    // value mixed.
    bool pushed = false;
    while (frame.next < frame.from.size()) {
      Value source = frame.from[frame.next];
      auto it = memo.find(source);
      if (it == memo.end()) {
        Frame child;
        child.value = source;
        stack.push_back(std::move(child)); // invalidates `frame`
        pushed = true;
        break;
      }
      ++frame.next;
      const Answer &answer = it->second.first;
      if (!it->second.second)
        continue;
      if (answer.mixedAt && !frame.mixedAt)
        frame.mixedAt = answer.mixedAt;
      if (answer.domain == Domain::Unknown)
        continue;
      frame.seen |= 1u << static_cast<unsigned>(answer.domain);
      if (!answer.byDefault && !frame.stated)
        frame.stated = answer;
      if (!frame.fallback)
        frame.fallback = answer;
    }
    if (pushed)
      continue;
    Answer found = frame.stated ? *frame.stated : frame.fallback.value_or(Answer());
    if ((frame.seen & (frame.seen - 1)) && !frame.mixedAt)
      frame.mixedAt = frame.value.getDefiningOp();
    if (frame.mixedAt)
      found = Answer{Domain::Unknown, nullptr, Value(), false, frame.mixedAt};
    memo[frame.value] = {found, true};
    stack.pop_back();
  }
  return memo.lookup(root).first;
}

DomainSource mlir::gnn::inferDomainSource(Value value) {
  DomainCache::Memo memo;
  return inferAnswer(value, memo);
}

Domain mlir::gnn::inferDomainForVerifier(Value value, Operation *user) {
  DomainCache::Memo memo;
  return inferAnswer(value, memo, user).domain;
}

DomainSource DomainCache::lookup(Value value) {
  return inferAnswer(value, memo);
}

Domain mlir::gnn::inferDomain(Value value, Operation **origin) {
  Answer answer = inferDomainSource(value);
  if (answer.domain != Domain::Unknown && origin)
    *origin = answer.origin;
  return answer.domain;
}
