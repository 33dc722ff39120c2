//===- GNNOps.cpp - gnn dialect operations --------------------------------===//
//
// Part of gnnc. Verifiers of the graph-level operations.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNSizes.h"
#include "gnn/Dialect/GNN/IR/KernelFamily.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::gnn;

//===----------------------------------------------------------------------===//
// The graph operand's type
//===----------------------------------------------------------------------===//

/// `custom<GraphType>(type($graph), type($first))`: a graph op's types start
/// with its graph's type only where that is not a plain `!gnn.graph`
/// (`: !gnn.graph<bipartite>, tensor<?x8xf32> -> ...`); a plain `!gnn.graph`
/// is implied, so the IR of one node set reads as it always did.
template <typename G, typename T>
static ParseResult parseGraphType(OpAsmParser &parser, G &graph, T &first) {
  SMLoc at = parser.getCurrentLocation();
  Type type;
  if (parser.parseType(type))
    return failure();
  if (auto g = dyn_cast<mlir::gnn::GraphType>(type)) {
    graph = g;
    at = parser.getCurrentLocation();
    if (parser.parseComma() || parser.parseType(type))
      return failure();
  } else {
    graph = mlir::gnn::GraphType::get(parser.getContext());
  }
  if constexpr (std::is_same_v<T, Type>) {
    first = type;
  } else {
    first = dyn_cast<T>(type);
    if (!first)
      return parser.emitError(at) << "expects a ranked tensor type but got "
                                  << type;
  }
  return success();
}

template <typename G, typename T>
static void printGraphType(OpAsmPrinter &printer, Operation *, G graph,
                           T first) {
  if (cast<mlir::gnn::GraphType>(graph) !=
      mlir::gnn::GraphType::get(graph.getContext()))
    printer << Type(graph) << ", ";
  printer << Type(first);
}

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

/// "a node", "an edge", "a source-node", "a destination-node".
static StringRef withArticle(Domain domain) {
  switch (domain) {
  case Domain::Node:
    return "a node";
  case Domain::Edge:
    return "an edge";
  case Domain::Src:
    return "a source-node";
  case Domain::Dst:
    return "a destination-node";
  case Domain::Unknown:
    break;
  }
  return "an unknown";
}

/// What a row of a tensor of `domain` is: "node", "edge", "source node".
static StringRef rowName(Domain domain) {
  switch (domain) {
  case Domain::Src:
    return "source node";
  case Domain::Dst:
    return "destination node";
  default:
    return stringifyDomain(domain);
  }
}

/// Checks that `value` is known to live on the `expected` index set: an edge
/// tensor where a node tensor is expected (or the reverse) would be read out
/// of bounds, and so would a tensor whose domain the IR does not tell.
static LogicalResult checkDomain(Operation *op, Value value, StringRef name,
                                 Domain expected);

/// checkDomain for the operand `use`, against what operandDomain requires.
static LogicalResult checkDomain(OpOperand &use, StringRef name) {
  std::optional<Domain> expected = operandDomain(use);
  assert(expected && "a graph op's node or edge operand");
  return checkDomain(use.getOwner(), use.get(), name, *expected);
}

static LogicalResult checkDomain(Operation *op, Value value, StringRef name,
                                 Domain expected) {
  if (inferDomainForVerifier(value, op) == expected)
    return success();
  DomainSource source = inferDomainSource(value);
  Domain actual = source.domain;
  if (actual == expected)
    return success();
  if (source.mixedAt) {
    InFlightDiagnostic diag =
        op->emitOpError()
        << "expects " << name << " to be " << withArticle(expected)
        << " tensor but it is computed from tensors of two index sets "
           "(node, edge, or the two sides of a bipartite graph)";
    diag.attachNote(source.mixedAt->getLoc())
        << "this op reads tensors of two index sets along its leading loop";
    return diag;
  }
  if (actual == Domain::Unknown) {
    InFlightDiagnostic diag =
        op->emitOpError()
        << "expects " << name << " to be " << withArticle(expected)
        << " tensor but cannot tell whether " << Type(value.getType())
        << " has one row per node or per edge; declare it with a `"
        << kDomainAttrName << "` function argument attribute";
    if (Operation *def = value.getDefiningOp())
      diag.attachNote(def->getLoc()) << "the tensor is produced here";
    return diag;
  }
  InFlightDiagnostic diag = op->emitOpError()
                            << "expects " << name << " to be "
                            << withArticle(expected) << " tensor but got "
                            << withArticle(actual) << " tensor";
  if (source.origin)
    diag.attachNote(source.origin->getLoc())
        << "the " << stringifyDomain(actual) << " tensor is produced here";
  else if (source.byDefault)
    diag.attachNote(source.argument.getLoc())
        << "a function argument with a dynamic leading dimension and no `"
        << kDomainAttrName << "` is a node tensor; declare `{"
        << kDomainAttrName << " = \"" << stringifyDomain(expected)
        << "\"}` if it has one row per " << rowName(expected);
  else
    diag.attachNote(source.argument.getLoc())
        << "declared by the function argument's `" << kDomainAttrName << "`";
  return failure();
}

/// Checks that `a` and `b` have the same element type.
static LogicalResult checkElementTypes(Operation *op, Value a, StringRef aName,
                                       Value b, StringRef bName) {
  Type ea = cast<RankedTensorType>(a.getType()).getElementType();
  Type eb = cast<RankedTensorType>(b.getType()).getElementType();
  if (ea == eb)
    return success();
  return op->emitOpError() << "expects " << aName << " and " << bName
                           << " to have the same element type but got " << ea
                           << " and " << eb;
}

/// Checks `a.shape[1 + i] == b.shape[1 + i]` for `i < count` (static sizes
/// only) after checking both ranks.
static LogicalResult checkTrailing(Operation *op, RankedTensorType a,
                                   StringRef aName, RankedTensorType b,
                                   StringRef bName, int64_t aRank,
                                   int64_t bRank) {
  if (a.getRank() != aRank || b.getRank() != bRank)
    return op->emitOpError()
           << "expects " << bName << " of rank " << bRank << " for " << aName
           << " of rank " << a.getRank() << " but got rank " << b.getRank()
           << " (" << Type(b) << ")";
  int64_t common = std::min(aRank, bRank);
  for (int64_t i = 1; i < common; ++i) {
    int64_t da = a.getDimSize(i), db = b.getDimSize(i);
    if (ShapedType::isDynamic(da) || ShapedType::isDynamic(db) || da == db)
      continue;
    return op->emitOpError()
           << "expects dimension " << i << " of " << bName << " to match "
           << aName << " (" << da << ") but got " << db;
  }
  return success();
}

/// Node tensors of one graph share their leading size.
static LogicalResult checkSameLeading(Operation *op, RankedTensorType a,
                                      StringRef aName, RankedTensorType b,
                                      StringRef bName, StringRef what) {
  int64_t da = a.getDimSize(0), db = b.getDimSize(0);
  if (ShapedType::isDynamic(da) || ShapedType::isDynamic(db) || da == db)
    return success();
  return op->emitOpError() << "expects " << aName << " and " << bName
                           << " to have the same number of " << what
                           << " but got " << da << " and " << db;
}

static LogicalResult checkAtLeastRank(Operation *op, RankedTensorType t,
                                      StringRef name, int64_t rank,
                                      StringRef why) {
  if (t.getRank() >= rank)
    return success();
  return op->emitOpError() << "expects " << name << " of rank at least "
                           << rank << " (" << why << ") but got "
                           << Type(t);
}

/// The `relation` forms of gather and reduce: on a typed graph, `rows` (the
/// node tensor, `nodes x R x ...`, R static) and `flat` (the edge tensor,
/// `edges x ...`) agree but for the relation dimension.
static LogicalResult checkRelationRows(Operation *op, Value graph,
                                       RankedTensorType rows,
                                       StringRef rowsName,
                                       RankedTensorType flat,
                                       StringRef flatName) {
  auto type = cast<mlir::gnn::GraphType>(graph.getType());
  if (!type.getTyped())
    return op->emitOpError()
           << "expects a typed graph (!gnn.graph<typed> or "
              "!gnn.graph<bipartite, typed>) with `relation` but got "
           << Type(type);
  if (rows.getRank() < 2)
    return op->emitOpError()
           << "expects " << rowsName
           << " of rank at least 2 (a row per node and relation) with "
              "`relation` but got "
           << Type(rows);
  int64_t r = rows.getDimSize(1);
  if (ShapedType::isDynamic(r) || r < 1)
    return op->emitOpError() << "expects a static relation count (dimension "
                                "1 of "
                             << rowsName << ") of at least 1 but got "
                             << Type(rows);
  if (flat.getRank() != rows.getRank() - 1)
    return op->emitOpError()
           << "expects " << flatName << " of rank " << rows.getRank() - 1
           << " (" << rowsName << "'s without the relation dimension) but got "
           << Type(flat);
  for (int64_t i = 1; i < flat.getRank(); ++i) {
    int64_t a = rows.getDimSize(i + 1), b = flat.getDimSize(i);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return op->emitOpError()
             << "expects dimension " << i << " of " << flatName
             << " to match dimension " << i + 1 << " of " << rowsName << " ("
             << a << ") but got " << b;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  if (failed(verifyStaticSizes(*this)))
    return failure();
  auto in = getInput().getType(), out = getResult().getType();
  if (failed(checkAtLeastRank(*this, in, "input", 1, "one row per node")) ||
      failed(checkElementTypes(*this, getInput(), "input", getResult(),
                               "result")))
    return failure();
  if (getRelation()
          ? failed(checkRelationRows(*this, getGraph(), in, "input", out,
                                     "result"))
          : failed(checkTrailing(*this, in, "input", out, "result",
                                 in.getRank(), in.getRank())))
    return failure();
  return checkDomain(getInputMutable(), "input");
}

//===----------------------------------------------------------------------===//
// SddmmOp
//===----------------------------------------------------------------------===//

LogicalResult SddmmOp::verify() {
  if (failed(verifyStaticSizes(*this)))
    return failure();
  auto lhs = getLhs().getType(), rhs = getRhs().getType(),
       out = getResult().getType();
  if (failed(checkAtLeastRank(*this, lhs, "lhs", 1, "one row per node")) ||
      failed(checkElementTypes(*this, getLhs(), "lhs", getRhs(), "rhs")) ||
      failed(checkElementTypes(*this, getLhs(), "lhs", getResult(),
                               "result")) ||
      failed(checkTrailing(*this, lhs, "lhs", rhs, "rhs", lhs.getRank(),
                           lhs.getRank())) ||
      (!isBipartite(getGraph()) &&
       failed(checkSameLeading(*this, lhs, "lhs", rhs, "rhs", "nodes"))))
    return failure();
  bool dot = getKind() == SddmmKind::dot;
  if (dot) {
    if (failed(checkAtLeastRank(*this, lhs, "lhs", 2,
                                "`dot` contracts the last dimension")))
      return failure();
    // The contracted dimension must agree exactly.
    int64_t fl = lhs.getDimSize(lhs.getRank() - 1),
            fr = rhs.getDimSize(rhs.getRank() - 1);
    if (!ShapedType::isDynamic(fl) && !ShapedType::isDynamic(fr) && fl != fr)
      return emitOpError() << "expects contracted dimensions to match but got "
                           << fl << " and " << fr;
  }
  int64_t outRank = dot ? lhs.getRank() - 1 : lhs.getRank();
  if (failed(checkTrailing(*this, lhs, "lhs", out, "result", lhs.getRank(),
                           outRank)))
    return failure();
  if (failed(checkDomain(getLhsMutable(), "lhs")) ||
      failed(checkDomain(getRhsMutable(), "rhs")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// EdgeSoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult EdgeSoftmaxOp::verify() {
  RankedTensorType in = getInput().getType();
  if (failed(checkAtLeastRank(*this, in, "input", 1, "one row per edge")))
    return failure();
  if (Value lse = getLse()) {
    auto lt = cast<RankedTensorType>(lse.getType());
    Type element = in.getElementType(), want = arithmeticType(element);
    if (lt.getElementType() != want)
      return emitOpError() << "expects lse of element type " << want
                           << " (the arithmetic type of the input's " << element
                           << ") but got " << lt.getElementType();
    if (failed(checkTrailing(*this, in, "input", lt, "lse", in.getRank(),
                             in.getRank())))
      return failure();
  }
  return checkDomain(getInputMutable(), "input");
}

//===----------------------------------------------------------------------===//
// SpmmOp
//===----------------------------------------------------------------------===//

/// An extremum's optional winner codes (spmm's and reduce's second result):
/// only for max or min, of the result's shape and arithmetic type.
static LogicalResult verifyWinner(Operation *op, ReduceKind kind, Value winner,
                                  RankedTensorType resultType) {
  Type result = withArithmeticElements(resultType);
  if (!winner)
    return success();
  if (kind != ReduceKind::max && kind != ReduceKind::min)
    return op->emitOpError() << "expects a 'winner' result only with max or "
                                "min but the reduction is "
                             << stringifyReduceKind(kind);
  if (winner.getType() != result)
    return op->emitOpError() << "expects 'winner' of the result's shape and "
                                "arithmetic type "
                             << result << " but got " << winner.getType();
  return success();
}

LogicalResult SpmmOp::verify() {
  if (failed(verifyStaticSizes(*this)))
    return failure();
  auto in = getInput().getType(), out = getResult().getType();
  if (failed(checkAtLeastRank(*this, in, "input", 2,
                              "node rows of features")) ||
      failed(checkElementTypes(*this, getInput(), "input", getResult(),
                               "result")) ||
      failed(checkTrailing(*this, in, "input", out, "result", in.getRank(),
                           in.getRank())) ||
      (!isBipartite(getGraph()) &&
       failed(checkSameLeading(*this, in, "input", out, "result", "nodes"))))
    return failure();
  if (Value w = getWeights()) {
    auto wt = cast<RankedTensorType>(w.getType());
    if (failed(checkElementTypes(*this, getInput(), "input", w, "weights")) ||
        failed(checkTrailing(*this, in, "input", wt, "weights", in.getRank(),
                             in.getRank() - 1)) ||
        failed(checkDomain(getWeightsMutable()[0], "weights")))
      return failure();
  }
  if (failed(verifyWinner(*this, getReduce(), getWinner(), out)))
    return failure();
  if (getCounted() && !getWinner())
    return emitOpError("expects 'counted' (how its winner codes name the "
                       "edges attaining the extremum) only with a 'winner' "
                       "result");
  return checkDomain(getInputMutable(), "input");
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (failed(verifyStaticSizes(*this)))
    return failure();
  auto in = getInput().getType(), out = getResult().getType();
  if (failed(checkAtLeastRank(*this, in, "input", 1, "one row per edge")) ||
      failed(checkElementTypes(*this, getInput(), "input", getResult(),
                               "result")) ||
      failed(verifyWinner(*this, getKind(), getWinner(), out)))
    return failure();
  if (getRelation()) {
    if (getKind() != ReduceKind::sum)
      return emitOpError() << "expects `sum` with `relation` (the gradient "
                              "of a relation gather) but got "
                           << stringifyReduceKind(getKind());
    if (failed(checkRelationRows(*this, getGraph(), out, "result", in,
                                 "input")))
      return failure();
  } else if (failed(checkTrailing(*this, in, "input", out, "result",
                                  in.getRank(), in.getRank()))) {
    return failure();
  }
  return checkDomain(getInputMutable(), "input");
}

//===----------------------------------------------------------------------===//
// ExtremumGradOp
//===----------------------------------------------------------------------===//

LogicalResult ExtremumGradOp::verify() {
  if (failed(verifyStaticSizes(*this)))
    return failure();
  Type type = getResult().getType();
  if (failed(checkAtLeastRank(*this, cast<RankedTensorType>(type), "result",
                              2, "node rows of features")))
    return failure();
  for (auto [name, use] :
       {std::pair<StringRef, OpOperand *>{"input", &getInputMutable()},
        {"extremum", &getExtremumMutable()},
        {"winner", &getWinnerMutable()},
        {"grad", &getGradMutable()}}) {
    // (Types: AllTypesMatch and TypesMatchWith.)
    if (failed(checkDomain(*use, name)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// DegreeOp
//===----------------------------------------------------------------------===//

LogicalResult DegreeOp::verify() {
  if (failed(verifyStaticSizes(*this)))
    return failure();
  auto out = getResult().getType();
  if (out.getRank() != 1)
    return emitOpError() << "expects a rank-1 result (one degree per node) "
                            "but got "
                         << Type(out);
  return success();
}

//===----------------------------------------------------------------------===//
// KernelGroupOp
//===----------------------------------------------------------------------===//

YieldOp KernelGroupOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult KernelGroupOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 0)
    return emitOpError() << "expects a body without block arguments but got "
                         << body.getNumArguments();
  if (body.getOperations().size() < 2)
    return emitOpError("expects at least one op besides the terminator");
  YieldOp yield = getYield();
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "expects the yielded types to match the results "
                            "but got "
                         << yield.getValues().getTypes() << " and "
                         << getResultTypes();
  // The graph ops of the body, in program order, against the family's shape;
  // the schedule's mapping against the family's lowerings.
  const KernelFamily &family = kernelFamily(getFamily());
  SmallVector<StringRef> names = graphOpNames(body);
  if (!family.accepts(names))
    return emitOpError() << "expects the graph ops of a family = "
                         << stringifyGroupFamily(family.family)
                         << " group to be " << family.shape << " but got "
                         << (names.empty() ? "none" : llvm::join(names, ", "));
  if (ScheduleAttr schedule = getScheduleAttr();
      schedule && !family.implements(schedule.getMapping())) {
    InFlightDiagnostic diag = emitOpError();
    diag << "expects the schedule of a family = "
         << stringifyGroupFamily(family.family) << " group to map threads "
         << (family.mappings.size() > 1 ? "one of " : "");
    llvm::interleaveComma(family.mappings, diag,
                          [&](Mapping m) { diag << stringifyMapping(m); });
    return diag << " but got " << stringifyMapping(schedule.getMapping());
  }
  return success();
}

#define GET_OP_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOps.cpp.inc"
