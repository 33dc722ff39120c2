//===- GNNDialect.cpp - gnn dialect ---------------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNN/IR/GraphStatsAttr.h"
#include "gnn/Dialect/GNN/IR/GNNInterfaces.h"
#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gnn;

#include "gnn/Dialect/GNN/IR/GNNOpsDialect.cpp.inc"

#include "gnn/Dialect/GNN/IR/GNNOpsEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOpsTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gnn/Dialect/GNN/IR/GNNOpsAttrs.cpp.inc"

Type mlir::gnn::GraphType::parse(AsmParser &parser) {
  if (failed(parser.parseOptionalLess()))
    return mlir::gnn::GraphType::get(parser.getContext());
  // `bipartite` and `typed`, each at most once, in that order.
  bool bipartite = false, typed = false;
  SMLoc at = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("bipartite"))) {
    bipartite = true;
    if (succeeded(parser.parseOptionalComma())) {
      at = parser.getCurrentLocation();
      if (failed(parser.parseOptionalKeyword("typed"))) {
        parser.emitError(at, "expects 'typed' after 'bipartite,'");
        return {};
      }
      typed = true;
    }
  } else if (succeeded(parser.parseOptionalKeyword("typed"))) {
    typed = true;
    if (succeeded(parser.parseOptionalComma())) {
      parser.emitError(at, "expects 'bipartite' before 'typed' "
                           "(!gnn.graph<bipartite, typed>)");
      return {};
    }
  } else {
    parser.emitError(at, "expects !gnn.graph, !gnn.graph<bipartite>, "
                         "!gnn.graph<typed> or !gnn.graph<bipartite, typed> "
                         "(the sizes are known only at run time)");
    return {};
  }
  if (failed(parser.parseGreater()))
    return {};
  return mlir::gnn::GraphType::get(parser.getContext(), bipartite, typed);
}

void mlir::gnn::GraphType::print(AsmPrinter &printer) const {
  if (getBipartite() && getTyped())
    printer << "<bipartite, typed>";
  else if (getBipartite())
    printer << "<bipartite>";
  else if (getTyped())
    printer << "<typed>";
}

LogicalResult
ScheduleAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                     Mapping mapping, int64_t lanes, int64_t block,
                     int64_t vector, int64_t split) {
  if (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)))
    return emitError() << "expects lanes to be a power of two in [1, 32] but "
                          "got "
                       << lanes;
  if (block < 32 || block > 1024 || block % 32)
    return emitError() << "expects block to be a multiple of 32 in [32, 1024] "
                          "but got "
                       << block;
  if (vector != 1 && vector != 2 && vector != 4 && vector != 8)
    return emitError() << "expects vector to be 1, 2, 4 or 8 but got "
                       << vector;
  if (split < 0 || (split > 0 && split < 32))
    return emitError() << "expects split to be 0 or at least 32 but got "
                       << split;
  return success();
}

LogicalResult GraphStatsAttr::verify(
    llvm::function_ref<InFlightDiagnostic()> emitError, int64_t nodes,
    int64_t edges, int64_t maxIn, int64_t maxOut, int64_t p50, int64_t p90,
    int64_t p99, int64_t p999, DenseI64ArrayAttr rowsByDegreeAttr,
    DenseI64ArrayAttr edgesByDegreeAttr, int64_t isolated, int64_t selfLoops,
    bool directed, int64_t graphs, int64_t smallestGraph,
    int64_t largestGraph, bool csrOrder) {
  (void)directed;
  (void)csrOrder;
  if (!rowsByDegreeAttr || !edgesByDegreeAttr)
    return emitError() << "expects rows_by_degree and edges_by_degree";
  ArrayRef<int64_t> rowsByDegree = rowsByDegreeAttr.asArrayRef();
  ArrayRef<int64_t> edgesByDegree = edgesByDegreeAttr.asArrayRef();
  std::pair<const char *, int64_t> counts[] = {
      {"nodes", nodes},         {"edges", edges},
      {"max_in", maxIn},        {"max_out", maxOut},
      {"p50", p50},             {"p90", p90},
      {"p99", p99},             {"p999", p999},
      {"isolated", isolated},   {"self_loops", selfLoops},
      {"graphs", graphs},       {"smallest_graph", smallestGraph},
      {"largest_graph", largestGraph}};
  for (auto [name, value] : counts)
    if (value < 0)
      return emitError() << "expects " << name << " >= 0 but got " << value;
  for (auto [name, histogram] :
       {std::pair<const char *, ArrayRef<int64_t>>{"rows_by_degree",
                                                   rowsByDegree},
        {"edges_by_degree", edgesByDegree}}) {
    if (histogram.size() > size_t(::gnn::GraphStats::kDegreeBuckets))
      return emitError() << "expects " << name << " of at most "
                         << ::gnn::GraphStats::kDegreeBuckets
                         << " buckets but got " << histogram.size();
    for (int64_t v : histogram)
      if (v < 0)
        return emitError() << "expects " << name << " counts >= 0 but got "
                           << v;
  }
  return success();
}

/// `histogram` without its trailing zeros.
static ArrayRef<int64_t> trimmed(ArrayRef<int64_t> histogram) {
  size_t n = histogram.size();
  while (n && !histogram[n - 1])
    --n;
  return histogram.take_front(n);
}

GraphStatsAttr mlir::gnn::graphStatsAttr(MLIRContext *context,
                                         const ::gnn::GraphStats &s) {
  return GraphStatsAttr::get(
      context, s.nodes, s.edges, s.maxInDegree, s.maxOutDegree, s.p50, s.p90,
      s.p99, s.p999, DenseI64ArrayAttr::get(context, trimmed(s.rowsByDegree)),
      DenseI64ArrayAttr::get(context, trimmed(s.edgesByDegree)),
      s.isolatedNodes, s.selfLoops, s.directed, s.graphs, s.smallestGraph,
      s.largestGraph, s.csrOrder);
}

::gnn::GraphStats mlir::gnn::statsOf(GraphStatsAttr a) {
  ::gnn::GraphStats s;
  s.nodes = a.getNodes();
  s.edges = a.getEdges();
  s.maxInDegree = a.getMaxIn();
  s.maxOutDegree = a.getMaxOut();
  s.p50 = a.getP50();
  s.p90 = a.getP90();
  s.p99 = a.getP99();
  s.p999 = a.getP999();
  llvm::copy(a.getRowsByDegree().asArrayRef(), s.rowsByDegree.begin());
  llvm::copy(a.getEdgesByDegree().asArrayRef(), s.edgesByDegree.begin());
  s.isolatedNodes = a.getIsolated();
  s.selfLoops = a.getSelfLoops();
  s.directed = a.getDirected();
  s.graphs = a.getGraphs();
  s.smallestGraph = a.getSmallestGraph();
  s.largestGraph = a.getLargestGraph();
  s.csrOrder = a.getCsrOrder();
  return s;
}

void GNNDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnn/Dialect/GNN/IR/GNNOpsAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "gnn/Dialect/GNN/IR/GNNOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "gnn/Dialect/GNN/IR/GNNOps.cpp.inc"
      >();
}

LogicalResult GNNDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() == kDifferentiableAttrName) {
    Region &region = op->getRegion(regionIndex);
    auto tensor =
        region.empty()
            ? RankedTensorType()
            : dyn_cast<RankedTensorType>(
                  region.front().getArgument(argIndex).getType());
    if (!isa<UnitAttr>(attr.getValue()) ||
        (!region.empty() &&
         (!tensor || !isa<FloatType>(tensor.getElementType()))))
      return op->emitError()
             << "expects `" << kDifferentiableAttrName
             << "` to be a unit attribute on a float tensor argument (argument #"
             << argIndex << ")";
    return success();
  }
  if (attr.getName() != kDomainAttrName)
    return op->emitError() << "unknown gnn argument attribute '"
                           << attr.getName().getValue() << "'";
  auto value = dyn_cast<StringAttr>(attr.getValue());
  if (!value || !parseDomain(value.getValue()))
    return op->emitError() << "expects `" << kDomainAttrName
                           << "` to be \"node\", \"edge\", \"src\" or "
                              "\"dst\" but got "
                           << attr.getValue();
  Region &region = op->getRegion(regionIndex);
  if (region.empty())
    return success();
  Type type = region.front().getArgument(argIndex).getType();
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < 1)
    return op->emitError() << "expects `" << kDomainAttrName
                           << "` on a ranked tensor of rank >= 1 but argument #"
                           << argIndex << " has type " << type;
  return success();
}
