//===- Evaluator.cpp - the reference semantics of gnn IR ------------------===//
//
// Part of gnnc. Everything here runs in double precision, sequentially, in
// edge-list order: the order of floating-point sums is part of the reference.
//
//===----------------------------------------------------------------------===//

#include "gnn/Reference/Evaluator.h"
#include "ScalarProgram.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Tensor/HalfFloat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <pthread.h>
#include <thread>

using namespace mlir;
using namespace ::gnn;
using ::gnn::reference::ScalarProgram;

/// A value as a diagnostic shows it: an integer without a fraction or an
/// exponent (a node id, a code), anything else with the digits it needs.
static std::string numberStr(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    os << (i ? ", " : "");
    if (ShapedType::isDynamic(shape[i]))
      os << '?';
    else
      os << shape[i];
  }
  os << ']';
  return os.str();
}

namespace gnn {
std::string wrongInputShape(size_t index, const ArgumentSpec &spec,
                            StringRef graphName, ArrayRef<int64_t> shape) {
  return "argument #" + std::to_string(index) + " (" + spec.role +
         ") expects shape " + shapeStr(spec.shape) + " on graph '" +
         graphName.str() + "' but the input has shape " + shapeStr(shape);
}
} // namespace gnn

//===----------------------------------------------------------------------===//
// Arguments and inputs
//===----------------------------------------------------------------------===//

/// For each op of `body`, the top-level values (block arguments and op
/// results of `body`) whose last use is that op, uses inside nested regions
/// counting for their ancestor op in `body`. Unused results die at their
/// own op.
static llvm::DenseMap<Operation *, SmallVector<Value>> lastUses(Block &body) {
  llvm::DenseMap<Operation *, SmallVector<Value>> dies;
  auto visit = [&](Value v, Operation *def) {
    Operation *last = def;
    for (Operation *user : v.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && (!last || last->isBeforeInBlock(top)))
        last = top;
    }
    if (last)
      dies[last].push_back(v);
  };
  for (BlockArgument arg : body.getArguments())
    visit(arg, nullptr);
  for (Operation &op : body)
    for (Value result : op.getResults())
      visit(result, &op);
  return dies;
}

namespace gnn {
LogicalResult checkHostMemory(func::FuncOp func, const HostGraph &graph,
                              bool argumentsOnly) {
  mlir::gnn::DomainCache domains;
  int64_t total = 0, largest = -1;
  Value largestValue;
  bool overflow = false;
  // The bytes of v (0 for non-tensors), computed once; records the largest.
  llvm::DenseMap<Value, int64_t> sizes;
  auto bytesOf = [&](Value v) -> int64_t {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || overflow)
      return 0;
    if (auto it = sizes.find(v); it != sizes.end())
      return it->second;
    std::vector<int64_t> shape(t.getShape().begin(), t.getShape().end());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!ShapedType::isDynamic(shape[d]))
        continue;
      shape[d] = 1;
      if (d != 0)
        continue;
      using mlir::gnn::Domain;
      Domain domain = domains.lookup(v).domain;
      shape[0] = domain == Domain::Edge   ? graph.numEdges()
                 : domain == Domain::Node ? graph.numNodes
                 : domain == Domain::Src  ? graph.srcNodes()
                 : domain == Domain::Dst  ? graph.dstNodes()
                         : std::max(graph.numNodes, graph.numEdges());
    }
    int64_t bytes = ::gnn::Tensor::hostBytes(shape);
    if (bytes > largest) {
      largest = bytes;
      largestValue = v;
    }
    if (bytes < 0) {
      overflow = true;
      return 0;
    }
    sizes[v] = bytes;
    return bytes;
  };
  auto add = [&](int64_t &sum, int64_t bytes) {
    if (__builtin_add_overflow(sum, bytes, &sum))
      overflow = true;
  };
  // The caller's inputs stay for the whole run.
  for (BlockArgument arg : func.getArguments())
    add(total, bytesOf(arg));
  if (!argumentsOnly && !func.isExternal()) {
    // The reference's own copies of the arguments and the results it holds,
    // in program order: each op's results join, then the values whose last
    // use it was leave.
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, SmallVector<Value>> dies = lastUses(body);
    int64_t live = 0, peak = 0;
    for (BlockArgument arg : body.getArguments())
      add(live, bytesOf(arg));
    peak = live;
    for (Operation &op : body) {
      // Nested values (linalg bodies) are scalars; results are what count.
      for (Value result : op.getResults())
        add(live, bytesOf(result));
      peak = std::max(peak, live);
      if (auto it = dies.find(&op); it != dies.end())
        for (Value v : it->second)
          live -= bytesOf(v);
    }
    add(total, peak);
  }
  int64_t memory = ::gnn::hostMemoryBytes();
  if (!overflow && total <= memory)
    return success();
  InFlightDiagnostic diag =
      func.emitError()
      << (argumentsOnly ? "the inputs need " : "the reference needs ")
      << (overflow ? std::string("more than 2^63") : std::to_string(total))
      << " bytes of host memory for the "
      << (argumentsOnly ? "arguments" : "tensors")
      << " of this function on the graph '"
      << graph.name << "' (" << graph.numNodes << " nodes, "
      << graph.numEdges() << " edges) but this machine has " << memory;
  if (largestValue && largest >= 0)
    diag.attachNote(largestValue.getLoc())
        << "the largest is this " << largestValue.getType() << " of "
        << largest << " bytes";
  else if (largestValue)
    diag.attachNote(largestValue.getLoc())
        << "this " << largestValue.getType()
        << " alone holds more than 2^63 bytes";
  return diag;
}

FailureOr<std::vector<ArgumentSpec>>
resolveArguments(func::FuncOp func, const HostGraph &graph) {
  std::vector<ArgumentSpec> specs;
  int graphs = 0;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    ArgumentSpec spec;
    if (isa<mlir::gnn::GraphType>(type)) {
      // A bipartite function runs on any graph (one node set is both
      // sides); one of one node set sees a bipartite graph as one node set
      // of its larger side's count (the Interpreter's `bipartite`).
      spec.isGraph = true;
      spec.role = "graph";
      ++graphs;
      specs.push_back(spec);
      continue;
    }
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !isa<FloatType>(tensor.getElementType()))
      return func.emitError() << "argument #" << i
                              << " expects a ranked float tensor or "
                                 "!gnn.graph but got "
                              << type;
    using mlir::gnn::Domain;
    auto domainAttr =
        func.getArgAttrOfType<StringAttr>(i, mlir::gnn::kDomainAttrName);
    std::optional<Domain> declared =
        domainAttr ? mlir::gnn::parseDomain(domainAttr.getValue())
                   : std::nullopt;
    for (auto [d, size] : llvm::enumerate(tensor.getShape())) {
      if (d > 0 && ShapedType::isDynamic(size))
        return func.emitError()
               << "argument #" << i << " has a dynamic dimension " << d
               << "; only the leading (node or edge) dimension may be dynamic";
    }
    spec.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    Type element = tensor.getElementType();
    spec.element = element.isF64()    ? "f64"
                   : element.isBF16() ? "bf16"
                   : element.isF16()  ? "f16"
                                      : "f32";
    bool dynamic =
        tensor.getRank() > 0 && ShapedType::isDynamic(tensor.getDimSize(0));
    if (dynamic || declared) {
      Domain d = declared.value_or(Domain::Node);
      spec.role = mlir::gnn::stringifyDomain(d).str();
      int64_t want = d == Domain::Edge  ? graph.numEdges()
                     : d == Domain::Src ? graph.srcNodes()
                     : d == Domain::Dst ? graph.dstNodes()
                                        : graph.numNodes;
      StringRef rows = d == Domain::Edge  ? "edges"
                       : d == Domain::Src ? "source nodes"
                       : d == Domain::Dst ? "destination nodes"
                                          : "nodes";
      if (dynamic)
        spec.shape[0] = want;
      else if (tensor.getRank() == 0 || tensor.getDimSize(0) != want)
        return func.emitError()
               << "argument #" << i << " is " << (d == Domain::Edge ? "an" : "a")
               << " " << spec.role << " tensor of type " << type
               << " but the graph '" << graph.name << "' has " << want << " "
               << rows;
    } else {
      spec.role = "dense";
    }
    specs.push_back(spec);
  }
  if (graphs != 1)
    return func.emitError() << "expects exactly one !gnn.graph argument but got "
                            << graphs;
  return specs;
}

std::vector<Tensor> makeSeededInputs(ArrayRef<ArgumentSpec> args,
                                          uint64_t seed) {
  std::vector<Tensor> inputs;
  for (auto [i, spec] : llvm::enumerate(args)) {
    if (spec.isGraph)
      continue;
    Tensor t(spec.shape);
    SplitMix64 rng(seed * 0x100000001B3ull + i + 1);
    double scale = 1.0;
    if (spec.role == "dense" && !spec.shape.empty() && spec.shape[0] > 0)
      scale = 1.0 / std::sqrt(static_cast<double>(spec.shape[0]));
    for (double &x : t.data)
      x = static_cast<float>((2.0 * rng.uniform() - 1.0) * scale);
    if (spec.element == "bf16" || spec.element == "f16")
      for (double &x : t.data)
        x = roundToHalf(x, spec.element == "bf16" ? HalfKind::BF16
                                                  : HalfKind::F16);
    inputs.push_back(std::move(t));
  }
  return inputs;
}
} // namespace gnn

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

// The evaluator's threads (defined with the contractions below).
static int contractionThreads(int64_t work, int64_t extent);
template <typename Body>
static void inRanges(int64_t extent, int threads, int perThread, Body body);

/// How a result's values are stored: as computed, or rounded once to the
/// element type (Storage::ElementType).
enum class Rounding { None, F32, BF16, F16 };

/// Stores `w` values of `reg` to `p` every `s` elements, rounded as `r`.
static void storeRounded(double *p, int64_t s, const double *reg, int64_t w,
                         Rounding r) {
  switch (r) {
  case Rounding::None:
    for (int64_t l = 0; l < w; ++l)
      p[l * s] = reg[l];
    return;
  case Rounding::F32:
    for (int64_t l = 0; l < w; ++l)
      p[l * s] = static_cast<float>(reg[l]);
    return;
  case Rounding::BF16:
  case Rounding::F16: {
    auto kind = r == Rounding::BF16 ? ::gnn::HalfKind::BF16
                                    : ::gnn::HalfKind::F16;
    for (int64_t l = 0; l < w; ++l)
      p[l * s] = ::gnn::roundToHalf(reg[l], kind);
    return;
  }
  }
}

namespace {

/// A runtime value: a tensor, a scalar (float, integer, index, i1) or the
/// graph.
struct RtValue {
  std::shared_ptr<Tensor> tensor;
  double scalar = 0;
};

/// Edges grouped by the node they enter (or leave), in edge-list order.
struct Incidence {
  std::vector<int64_t> ptr, edges;
  /// The rows: destinations (sources, reversed).
  int64_t rows() const { return static_cast<int64_t>(ptr.size()) - 1; }
};

class Interpreter {
public:
  Interpreter(const HostGraph &graph, ::gnn::Storage storage)
      : graph(graph), storage(storage) {}

  /// Runs `func` on `inputs`, which it takes over (no copy of them is
  /// made: the Python ops' inputs are converted to double for the call).
  FailureOr<std::vector<Tensor>> run(func::FuncOp func,
                                     std::vector<Tensor> inputs);

private:
  const HostGraph &graph;
  /// Whether the function's graph is `!gnn.graph<bipartite>`: its node
  /// tensors have the rows of their side. A function of one node set sees
  /// a bipartite graph as one node set of numNodes (the larger side's)
  /// nodes, sources and destinations both numbered from 0 in it.
  bool bipartite = false;
  ::gnn::Storage storage;
  llvm::DenseMap<Value, RtValue> env;
  /// The values whose last use is the op being executed (freed after it):
  /// an op may take such a value's tensor over instead of copying it.
  ArrayRef<Value> dying;
  /// `v`'s tensor for an op to write: taken over where this op is its last
  /// use and no other value shares it, else a copy.
  Tensor takeOrCopy(Value v) {
    std::shared_ptr<Tensor> &t = env[v].tensor;
    if (t.use_count() == 1 && llvm::is_contained(dying, v))
      return std::move(*t);
    return *t;
  }
  Incidence incoming, outgoing;
  bool haveIncoming = false, haveOutgoing = false;

  const Incidence &incidence(bool reversed);
  /// A `relation` op's graph has types, all below `relations`.
  LogicalResult checkRelations(Operation *op, int64_t relations);
  /// The node count of the destinations (`destination`) or the sources,
  /// turned around with `reversed`: the two sides of a bipartite graph.
  int64_t side(bool destination, bool reversed) const {
    if (!bipartite)
      return graph.numNodes;
    return destination != reversed ? graph.dstNodes() : graph.srcNodes();
  }
  /// What a row on that side is, for diagnostics.
  StringRef sideName(bool destination) const {
    if (!bipartite || !graph.bipartite())
      return "node";
    return destination ? "destination node" : "source node";
  }
  LogicalResult execute(Operation &op);
  LogicalResult checkResult(Operation *op, Value result, const Tensor &t);
  FailureOr<const Tensor *> tensorOf(Operation *op, Value v, StringRef name);
  FailureOr<const Tensor *> rowsOf(Operation *op, Value v, StringRef name,
                                   int64_t rows, StringRef what);
  /// How `v`'s values are stored: with Storage::ElementType, rounded once
  /// from the double to its element type where that is f32, bf16 or f16.
  Rounding roundingOf(Value v) const {
    auto shaped = dyn_cast<ShapedType>(v.getType());
    Type element = shaped ? shaped.getElementType() : Type();
    if (storage != ::gnn::Storage::ElementType || !element)
      return Rounding::None;
    return element.isF32()    ? Rounding::F32
           : element.isBF16() ? Rounding::BF16
           : element.isF16()  ? Rounding::F16
                              : Rounding::None;
  }
  /// Binds an op's result, rounded as roundingOf says (large ones on
  /// several threads), not where `exact`: values stored rounded already,
  /// or an empty tensor's, which nothing reads before they are written.
  void setTensor(Value v, Tensor t, bool exact = false) {
    Rounding rounding = exact ? Rounding::None : roundingOf(v);
    if (rounding != Rounding::None) {
      double *d = t.data.data();
      const int64_t count = static_cast<int64_t>(t.data.size());
      inRanges(count, contractionThreads(count, count), 8,
               [&](int64_t lo, int64_t hi) {
                 storeRounded(d + lo, 1, d + lo, hi - lo, rounding);
               });
    }
    env[v].tensor = std::make_shared<Tensor>(std::move(t));
  }

  LogicalResult gather(mlir::gnn::GatherOp op);
  LogicalResult sddmm(mlir::gnn::SddmmOp op);
  LogicalResult edgeSoftmax(mlir::gnn::EdgeSoftmaxOp op);
  LogicalResult spmm(mlir::gnn::SpmmOp op);
  LogicalResult reduce(mlir::gnn::ReduceOp op);
  LogicalResult degree(mlir::gnn::DegreeOp op);
  LogicalResult extremumGrad(mlir::gnn::ExtremumGradOp op);
  LogicalResult linalgOp(linalg::LinalgOp op);
  LogicalResult constant(arith::ConstantOp op);
  LogicalResult reshape(Operation *op, Value src, Value result,
                        ArrayRef<ReassociationIndices> groups, bool expand);
};

} // namespace

const Incidence &Interpreter::incidence(bool reversed) {
  Incidence &inc = reversed ? outgoing : incoming;
  bool &have = reversed ? haveOutgoing : haveIncoming;
  if (have)
    return inc;
  const std::vector<int64_t> &key = reversed ? graph.src : graph.dst;
  int64_t rows = side(true, reversed);
  inc.ptr.assign(rows + 1, 0);
  for (int64_t n : key)
    ++inc.ptr[n + 1];
  for (int64_t n = 0; n < rows; ++n)
    inc.ptr[n + 1] += inc.ptr[n];
  inc.edges.resize(key.size());
  std::vector<int64_t> fill(inc.ptr.begin(), inc.ptr.end() - 1);
  for (int64_t e = 0; e < static_cast<int64_t>(key.size()); ++e)
    inc.edges[fill[key[e]]++] = e;
  have = true;
  return inc;
}

FailureOr<const Tensor *> Interpreter::tensorOf(Operation *op, Value v,
                                                StringRef name) {
  auto it = env.find(v);
  if (it == env.end() || !it->second.tensor)
    return op->emitOpError() << "has no tensor value for " << name;
  return it->second.tensor.get();
}

FailureOr<const Tensor *> Interpreter::rowsOf(Operation *op, Value v,
                                              StringRef name, int64_t rows,
                                              StringRef what) {
  FailureOr<const Tensor *> t = tensorOf(op, v, name);
  if (failed(t))
    return failure();
  if ((*t)->rank() == 0 || (*t)->shape[0] != rows)
    return op->emitOpError()
           << "expects " << name << " to have one row per " << what << " ("
           << rows << " rows for graph '" << graph.name << "') but got shape "
           << (*t)->shapeString();
  return t;
}

LogicalResult Interpreter::checkResult(Operation *op, Value result,
                                       const Tensor &t) {
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type)
    return success();
  bool ok = type.getRank() == t.rank();
  for (int64_t i = 0; ok && i < type.getRank(); ++i)
    ok = ShapedType::isDynamic(type.getDimSize(i)) ||
         type.getDimSize(i) == t.shape[i];
  if (ok)
    return success();
  return op->emitOpError() << "produces shape " << t.shapeString()
                           << " on graph '" << graph.name
                           << "' but its result type is " << type;
}

//===----------------------------------------------------------------------===//
// Graph ops
//===----------------------------------------------------------------------===//

LogicalResult Interpreter::gather(mlir::gnn::GatherOp op) {
  bool atDst = op.getEnd() == mlir::gnn::EdgeEnd::dst;
  FailureOr<const Tensor *> in = rowsOf(op, op.getInput(), "input",
                                        side(atDst, false), sideName(atDst));
  if (failed(in))
    return failure();
  std::vector<int64_t> shape = (*in)->shape;
  shape[0] = graph.numEdges();
  int64_t row = (*in)->rowSize();
  const auto &end = op.getEnd() == mlir::gnn::EdgeEnd::src ? graph.src : graph.dst;
  if (op.getRelation()) {
    // Row (node, type(e)) of a nodes x R x ... input.
    if (failed(checkRelations(op, (*in)->shape[1])))
      return failure();
    shape.erase(shape.begin() + 1);
    Tensor out(shape);
    int64_t sub = out.rowSize();
    for (int64_t e = 0; e < graph.numEdges(); ++e)
      std::copy_n((*in)->data.begin() + end[e] * row +
                      graph.edgeTypes[e] * sub,
                  sub, out.data.begin() + e * sub);
    setTensor(op.getResult(), std::move(out));
    return success();
  }
  // (Every row written: no zero fill first.)
  Tensor out = Tensor::uninitialized(shape);
  inRanges(graph.numEdges(),
           contractionThreads(graph.numEdges() * row, graph.numEdges()), 8,
           [&](int64_t lo, int64_t hi) {
             for (int64_t e = lo; e < hi; ++e)
               std::copy_n((*in)->data.begin() + end[e] * row, row,
                           out.data.begin() + e * row);
           });
  setTensor(op.getResult(), std::move(out));
  return success();
}

LogicalResult Interpreter::checkRelations(Operation *op, int64_t relations) {
  if (!graph.typed())
    return op->emitOpError()
           << "expects a typed graph (edge types) but graph '" << graph.name
           << "' has none (a generator takes relations=R)";
  for (int64_t e = 0; e < graph.numEdges(); ++e)
    if (graph.edgeTypes[e] >= relations)
      return op->emitOpError()
             << "expects relation ids in [0, " << relations
             << ") but edge " << e << " of graph '" << graph.name
             << "' has relation " << graph.edgeTypes[e];
  return success();
}

LogicalResult Interpreter::sddmm(mlir::gnn::SddmmOp op) {
  bool rev = op.getReversed();
  FailureOr<const Tensor *> lhs = rowsOf(op, op.getLhs(), "lhs",
                                         side(false, rev), sideName(rev));
  if (failed(lhs))
    return failure();
  FailureOr<const Tensor *> rhs = rowsOf(op, op.getRhs(), "rhs",
                                         side(true, rev), sideName(!rev));
  if (failed(rhs))
    return failure();
  if (!std::equal((*lhs)->shape.begin() + 1, (*lhs)->shape.end(),
                  (*rhs)->shape.begin() + 1, (*rhs)->shape.end()))
    return op.emitOpError() << "expects lhs and rhs of the same shape but got "
                            << (*lhs)->shapeString() << " and "
                            << (*rhs)->shapeString();
  const auto &lhsEnd = op.getReversed() ? graph.dst : graph.src;
  const auto &rhsEnd = op.getReversed() ? graph.src : graph.dst;
  int64_t row = (*lhs)->rowSize();
  std::vector<int64_t> shape = (*lhs)->shape;
  shape[0] = graph.numEdges();
  auto kind = op.getKind();
  if (kind == mlir::gnn::SddmmKind::dot) {
    int64_t f = shape.back();
    shape.pop_back();
    Tensor out(shape);
    int64_t heads = f ? row / f : 0;
    for (int64_t e = 0; e < graph.numEdges(); ++e) {
      const double *a = (*lhs)->data.data() + lhsEnd[e] * row;
      const double *b = (*rhs)->data.data() + rhsEnd[e] * row;
      for (int64_t h = 0; h < heads; ++h) {
        double acc = 0;
        for (int64_t k = 0; k < f; ++k)
          acc += a[h * f + k] * b[h * f + k];
        out.data[e * heads + h] = acc;
      }
    }
    setTensor(op.getResult(), std::move(out));
    return success();
  }
  Tensor out(shape);
  for (int64_t e = 0; e < graph.numEdges(); ++e) {
    const double *a = (*lhs)->data.data() + lhsEnd[e] * row;
    const double *b = (*rhs)->data.data() + rhsEnd[e] * row;
    double *o = out.data.data() + e * row;
    for (int64_t k = 0; k < row; ++k) {
      switch (kind) {
      case mlir::gnn::SddmmKind::add: o[k] = a[k] + b[k]; break;
      case mlir::gnn::SddmmKind::sub: o[k] = a[k] - b[k]; break;
      case mlir::gnn::SddmmKind::mul: o[k] = a[k] * b[k]; break;
      case mlir::gnn::SddmmKind::dot: break;
      }
    }
  }
  setTensor(op.getResult(), std::move(out));
  return success();
}

/// The maximum and minimum of two values, NaN if either is (torch.amax's),
/// signed zeros ordered (the kernels' gnn_maximumf / gnn_minimumf).
static double nanMax(double a, double b) { return reference::maximumF(a, b); }
static double nanMin(double a, double b) { return reference::minimumF(a, b); }

LogicalResult Interpreter::edgeSoftmax(mlir::gnn::EdgeSoftmaxOp op) {
  FailureOr<const Tensor *> in =
      rowsOf(op, op.getInput(), "input", graph.numEdges(), "edge");
  if (failed(in))
    return failure();
  const Incidence &inc = incidence(op.getReversed());
  Tensor out((*in)->shape);
  int64_t row = (*in)->rowSize();
  const HostDoubles &x = (*in)->data;
  constexpr double inf = std::numeric_limits<double>::infinity();
  // The log-sum-exp: one row per node, -inf where a node has no edge.
  std::vector<int64_t> lseShape = (*in)->shape;
  lseShape[0] = inc.rows();
  Tensor lse(lseShape);
  std::fill(lse.data.begin(), lse.data.end(), -inf);
  for (int64_t n = 0; n < inc.rows(); ++n) {
    for (int64_t h = 0; h < row; ++h) {
      if (inc.ptr[n] == inc.ptr[n + 1])
        continue;
      // The textbook formula, as PyTorch evaluates it: the maximum
      // propagates NaN; a NaN value, a +inf (inf - inf) or a group of -inf
      // only (-inf - -inf) makes the whole group NaN.
      double m = -inf;
      for (int64_t i = inc.ptr[n]; i < inc.ptr[n + 1]; ++i)
        m = nanMax(m, x[inc.edges[i] * row + h]);
      double sum = 0;
      for (int64_t i = inc.ptr[n]; i < inc.ptr[n + 1]; ++i)
        sum += std::exp(x[inc.edges[i] * row + h] - m);
      for (int64_t i = inc.ptr[n]; i < inc.ptr[n + 1]; ++i) {
        int64_t at = inc.edges[i] * row + h;
        out.data[at] = std::exp(x[at] - m) / sum;
      }
      lse.data[n * row + h] = m + std::log(sum);
    }
  }
  setTensor(op.getResult(), std::move(out));
  if (Value l = op.getLse())
    setTensor(l, std::move(lse));
  return success();
}

/// Asks for the first two cache lines of a row of `row` values that an
/// aggregation reads a few edges later (the rows are scattered: the
/// hardware's prefetcher cannot guess them).
static void prefetchRow(const double *p, int64_t row) {
  __builtin_prefetch(p);
  if (row > 8)
    __builtin_prefetch(p + 8);
}

/// Reduces, per node, the rows of the node's incident edges (`rowOf(e,
/// scratch)`: a pointer to edge e's `row` values, which it may compute
/// into `scratch`, room for `row`); nodes with no edge get 0. Each element
/// starts from its first edge's value and takes the others in incidence
/// order; the node's row is walked edge by edge (a row of the input at a
/// time, the elements independent), not element by element down the
/// edges. Large reductions run on several threads, each over its own nodes
/// (the same sums bit for bit whatever their number); `prefetch(e)` asks
/// for the memory of edge e's row ahead of its use.
template <typename RowFn, typename PrefetchFn>
static void reduceRows(const Incidence &inc, int64_t row,
                       mlir::gnn::ReduceKind kind, Tensor &out, RowFn rowOf,
                       PrefetchFn prefetch) {
  auto nodes = [&](int64_t lo, int64_t hi) {
    std::vector<double> scratch(row);
    for (int64_t n = lo; n < hi; ++n) {
      int64_t begin = inc.ptr[n], end = inc.ptr[n + 1];
      if (begin == end)
        continue;
      double *o = out.data.data() + n * row;
      const double *v = rowOf(inc.edges[begin], scratch.data());
      for (int64_t k = 0; k < row; ++k)
        o[k] = v[k];
      for (int64_t i = begin + 1; i < end; ++i) {
        if (i + 8 < static_cast<int64_t>(inc.edges.size()))
          prefetch(inc.edges[i + 8]); // (eight edges ahead)
        v = rowOf(inc.edges[i], scratch.data());
        switch (kind) {
        case mlir::gnn::ReduceKind::sum:
        case mlir::gnn::ReduceKind::mean:
          for (int64_t k = 0; k < row; ++k)
            o[k] += v[k];
          break;
        // NaN propagates through max and min, as in torch.
        case mlir::gnn::ReduceKind::max:
          for (int64_t k = 0; k < row; ++k)
            o[k] = nanMax(o[k], v[k]);
          break;
        case mlir::gnn::ReduceKind::min:
          for (int64_t k = 0; k < row; ++k)
            o[k] = nanMin(o[k], v[k]);
          break;
        }
      }
      if (kind == mlir::gnn::ReduceKind::mean)
        for (int64_t k = 0; k < row; ++k)
          o[k] /= static_cast<double>(end - begin);
    }
  };
  const int64_t work = static_cast<int64_t>(inc.edges.size()) * row;
  inRanges(inc.rows(), contractionThreads(work, inc.rows()), 8, nodes);
}

/// The `winner` codes of an extremum `out` over `inc`'s rows (see gnn.spmm):
/// per element, NaN where the extremum is NaN, -1 where no edge attains it,
/// else -(c + 1) for the c edges attaining it; with `neighbour` (the
/// unweighted spmm without `counted`: the other end of each edge, whose row
/// the edge's value is), a single such edge is named by its neighbour's id instead when the
/// extremum is not `identity` and the id is below 2^`idBits`.
template <typename ValueFn>
static Tensor winnerCodes(const Incidence &inc, int64_t row,
                          const Tensor &out, double identity, int idBits,
                          const std::vector<int64_t> *neighbour,
                          ValueFn value) {
  Tensor code(out.shape);
  for (int64_t n = 0; n < inc.rows(); ++n)
    for (int64_t k = 0; k < row; ++k) {
      double y = out.data[n * row + k];
      // A NaN extremum: every edge shares its NaN gradient (NaN code).
      if (std::isnan(y)) {
        code.data[n * row + k] = y;
        continue;
      }
      int64_t count = 0, first = -1;
      for (int64_t i = inc.ptr[n]; i < inc.ptr[n + 1]; ++i) {
        int64_t e = inc.edges[i];
        if (value(e, k) != y)
          continue;
        if (count++ == 0)
          first = neighbour ? (*neighbour)[e] : e;
      }
      double c = -static_cast<double>(count + 1);
      if (neighbour && count == 1 && y != identity &&
          first < (int64_t(1) << idBits))
        c = static_cast<double>(first);
      code.data[n * row + k] = count == 0 ? -1.0 : c;
    }
  return code;
}

/// winnerCodes for `op` (spmm or reduce max/min) of result `out`; `neighbour`
/// as there.
template <typename ValueFn>
static Tensor winnerCodesOf(Operation *op, mlir::gnn::ReduceKind kind,
                            const Incidence &inc, const Tensor &out,
                            const std::vector<int64_t> *neighbour,
                            ValueFn value) {
  double inf = std::numeric_limits<double>::infinity();
  int bits = getElementTypeOrSelf(op->getResult(0).getType()).isF64() ? 53 : 24;
  return winnerCodes(inc, out.rowSize(), out,
                     kind == mlir::gnn::ReduceKind::max ? -inf : inf, bits,
                     neighbour, value);
}

LogicalResult Interpreter::spmm(mlir::gnn::SpmmOp op) {
  bool rev = op.getReversed();
  FailureOr<const Tensor *> in = rowsOf(op, op.getInput(), "input",
                                        side(false, rev), sideName(rev));
  if (failed(in))
    return failure();
  const Tensor *w = nullptr;
  if (op.getWeights()) {
    FailureOr<const Tensor *> wt =
        rowsOf(op, op.getWeights(), "weights", graph.numEdges(), "edge");
    if (failed(wt))
      return failure();
    w = *wt;
    std::vector<int64_t> want((*in)->shape.begin(), (*in)->shape.end() - 1);
    want[0] = graph.numEdges();
    if (w->shape != want)
      return op.emitOpError() << "expects weights of shape " << shapeStr(want)
                              << " but got " << w->shapeString();
  }
  const Incidence &inc = incidence(op.getReversed());
  const auto &from = op.getReversed() ? graph.dst : graph.src;
  int64_t row = (*in)->rowSize();
  int64_t f = (*in)->shape.back();
  int64_t wrow = w ? w->rowSize() : 1;
  std::vector<int64_t> shape = (*in)->shape;
  shape[0] = inc.rows();
  Tensor out(shape);
  const double *x = (*in)->data.data();
  auto value = [&](int64_t e, int64_t k) {
    double v = x[from[e] * row + k];
    return w ? w->data[e * wrow + k / f] * v : v;
  };
  // The same values a row at a time: the source's row, times the edge's
  // weight of each group of f where there are weights.
  auto rowOf = [&](int64_t e, double *scratch) -> const double * {
    const double *xr = x + from[e] * row;
    if (!w)
      return xr;
    const double *we = w->data.data() + e * wrow;
    for (int64_t h = 0; h < wrow; ++h)
      for (int64_t k = 0; k < f; ++k)
        scratch[h * f + k] = we[h] * xr[h * f + k];
    return scratch;
  };
  reduceRows(inc, row, op.getReduce(), out, rowOf, [&](int64_t e) {
    prefetchRow(x + from[e] * row, row);
  });
  if (Value winner = op.getWinner())
    setTensor(winner,
              winnerCodesOf(op, op.getReduce(), inc, out,
                            w || op.getCounted() ? nullptr : &from, value));
  setTensor(op.getResult(), std::move(out));
  return success();
}

LogicalResult Interpreter::reduce(mlir::gnn::ReduceOp op) {
  FailureOr<const Tensor *> in =
      rowsOf(op, op.getInput(), "input", graph.numEdges(), "edge");
  if (failed(in))
    return failure();
  const Incidence &inc = incidence(op.getReversed());
  std::vector<int64_t> shape = (*in)->shape;
  shape[0] = inc.rows();
  int64_t row = (*in)->rowSize();
  const double *x = (*in)->data.data();
  if (op.getRelation()) {
    // Each edge adds into row (node, type(e)), in edge-list order.
    int64_t relations = op.getResult().getType().getDimSize(1);
    if (failed(checkRelations(op, relations)))
      return failure();
    shape.insert(shape.begin() + 1, relations);
    Tensor out(shape);
    for (int64_t n = 0; n < inc.rows(); ++n)
      for (int64_t i = inc.ptr[n]; i < inc.ptr[n + 1]; ++i) {
        int64_t e = inc.edges[i];
        double *o = out.data.data() + (n * relations + graph.edgeTypes[e]) * row;
        for (int64_t k = 0; k < row; ++k)
          o[k] += x[e * row + k];
      }
    setTensor(op.getResult(), std::move(out));
    return success();
  }
  Tensor out(shape);
  auto value = [&](int64_t e, int64_t k) { return x[e * row + k]; };
  reduceRows(
      inc, row, op.getKind(), out,
      [&](int64_t e, double *) { return x + e * row; },
      [&](int64_t e) { prefetchRow(x + e * row, row); });
  if (Value winner = op.getWinner())
    setTensor(winner,
              winnerCodesOf(op, op.getKind(), inc, out, nullptr, value));
  setTensor(op.getResult(), std::move(out));
  return success();
}

LogicalResult Interpreter::extremumGrad(mlir::gnn::ExtremumGradOp op) {
  const Tensor *t[4];
  Value operands[4] = {op.getInput(), op.getExtremum(), op.getWinner(),
                       op.getGrad()};
  StringRef names[4] = {"input", "extremum", "winner", "grad"};
  bool rev = op.getReversed();
  for (int i = 0; i < 4; ++i) {
    // The input's rows are the sources, the others' the destinations.
    bool atDst = i > 0;
    FailureOr<const Tensor *> r =
        rowsOf(op, operands[i], names[i], side(atDst, rev),
               sideName(atDst != rev));
    if (failed(r))
      return failure();
    t[i] = *r;
    if (i > 1 && t[i]->shape != t[1]->shape)
      return op.emitOpError() << "expects '" << names[i] << "' of shape "
                              << t[1]->shapeString() << " but got "
                              << t[i]->shapeString();
  }
  if (!std::equal(t[0]->shape.begin() + 1, t[0]->shape.end(),
                  t[1]->shape.begin() + 1, t[1]->shape.end()))
    return op.emitOpError() << "expects 'input' and 'extremum' rows of one "
                               "shape but got "
                            << t[0]->shapeString() << " and "
                            << t[1]->shapeString();
  const Tensor &x = *t[0], &y = *t[1], &code = *t[2], &dy = *t[3];
  bool reversed = op.getReversed();
  const Incidence &inc = incidence(reversed);
  const auto &from = reversed ? graph.dst : graph.src;
  int64_t row = x.rowSize();
  Tensor dx(x.shape);
  int64_t sources = side(false, reversed);
  for (int64_t n = 0; n < inc.rows(); ++n)
    for (int64_t k = 0; k < row; ++k) {
      double c = code.data[n * row + k], g = dy.data[n * row + k];
      if (c >= 0) {
        if (c >= static_cast<double>(sources) || c != std::floor(c))
          return op.emitOpError()
                 << "expects winner codes that are node ids (below "
                 << sources << ") but element " << n * row + k << " is "
                 << numberStr(c);
        dx.data[static_cast<int64_t>(c) * row + k] += g;
        continue;
      }
      int64_t begin = inc.ptr[n], end = inc.ptr[n + 1], ties = 0;
      if (std::isnan(c)) {
        // A NaN extremum gives every edge a NaN gradient, as torch's
        // scatter_reduce does (no edge equals it: 0 * dy / 0).
        for (int64_t i = begin; i < end; ++i)
          dx.data[from[inc.edges[i]] * row + k] += c;
        continue;
      }
      if (!(c < -1.0))
        continue;
      // The edges attaining the extremum share the gradient equally; the
      // code counts them (the CUDA kernel divides by its count).
      double v = y.data[n * row + k];
      for (int64_t i = begin; i < end; ++i)
        ties += x.data[from[inc.edges[i]] * row + k] == v;
      if (c != -static_cast<double>(ties + 1))
        return op.emitOpError()
               << "expects tie codes -(c + 1) for the c edges attaining the "
                  "extremum, but element "
               << n * row + k << " is " << numberStr(c) << " where " << ties
               << " edge(s) attain " << numberStr(v);
      for (int64_t i = begin; i < end; ++i)
        if (x.data[from[inc.edges[i]] * row + k] == v)
          dx.data[from[inc.edges[i]] * row + k] += g / ties;
    }
  setTensor(op.getResult(), std::move(dx));
  return success();
}

LogicalResult Interpreter::degree(mlir::gnn::DegreeOp op) {
  const Incidence &inc = incidence(op.getReversed());
  Tensor out({inc.rows()});
  for (int64_t n = 0; n < inc.rows(); ++n)
    out.data[n] = static_cast<double>(inc.ptr[n + 1] - inc.ptr[n]);
  setTensor(op.getResult(), std::move(out));
  return success();
}

//===----------------------------------------------------------------------===//
// Dense ops
//===----------------------------------------------------------------------===//

LogicalResult Interpreter::constant(arith::ConstantOp op) {
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue())) {
    auto type = cast<ShapedType>(dense.getType());
    Tensor t(std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
    if (isa<FloatType>(type.getElementType())) {
      int64_t i = 0;
      if (dense.isSplat())
        std::fill(t.data.begin(), t.data.end(),
                  dense.getSplatValue<APFloat>().convertToDouble());
      else
        for (APFloat v : dense.getValues<APFloat>())
          t.data[i++] = v.convertToDouble();
    } else {
      return op.emitOpError("expects a float tensor constant");
    }
    setTensor(op.getResult(), std::move(t));
    return success();
  }
  FailureOr<double> v = ScalarProgram::evaluateOp(op, {});
  if (failed(v))
    return failure();
  env[op.getResult()].scalar = *v;
  return success();
}

LogicalResult Interpreter::reshape(Operation *op, Value src, Value result,
                                   ArrayRef<ReassociationIndices> groups,
                                   bool expand) {
  FailureOr<const Tensor *> in = tensorOf(op, src, "source");
  if (failed(in))
    return failure();
  auto type = cast<RankedTensorType>(result.getType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  for (auto [g, group] : llvm::enumerate(groups)) {
    if (!expand) {
      int64_t prod = 1;
      for (int64_t d : group)
        prod *= (*in)->shape[d];
      shape[g] = prod;
      continue;
    }
    int64_t known = 1, dynamicAt = -1;
    for (int64_t d : group) {
      if (ShapedType::isDynamic(shape[d]))
        dynamicAt = d;
      else
        known *= shape[d];
    }
    if (dynamicAt >= 0)
      shape[dynamicAt] = known ? (*in)->shape[g] / known : 0;
  }
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  if (elements != (*in)->numElements())
    return op->emitOpError() << "cannot reshape " << (*in)->shapeString()
                             << " to " << shapeStr(shape);
  Tensor out = takeOrCopy(src);
  out.shape = shape;
  setTensor(result, std::move(out));
  return success();
}

/// Whether `op` is a contraction `c += a * b`: two inputs, one init, three
/// loops, the body `yield addf(c, mulf(a, b))` in any operand order (a
/// `linalg.matmul`, and gnn-autodiff's matmul gradients `dC Bᵀ`, `Aᵀ dC`).
/// The reference runs those natively instead of interpreting the body per
/// point: a weight gradient over a million nodes is 2^34 points.
static bool isContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3 || op->getNumRegions() != 1)
    return false;
  Block &body = op->getRegion(0).front();
  if (body.getNumArguments() != 3 || !llvm::hasNItems(body, 3))
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield && yield.getNumOperands() == 1
                 ? yield.getOperand(0).getDefiningOp<arith::AddFOp>()
                 : arith::AddFOp();
  if (!add)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1),
        c = body.getArgument(2);
  auto isProduct = [&](Value v) {
    auto mul = v.getDefiningOp<arith::MulFOp>();
    return mul && ((mul.getLhs() == a && mul.getRhs() == b) ||
                   (mul.getLhs() == b && mul.getRhs() == a));
  };
  return (add.getLhs() == c && isProduct(add.getRhs())) ||
         (add.getRhs() == c && isProduct(add.getLhs()));
}

namespace {
/// A linalg operand's data (a tensor) or scalar value, with its offset and
/// per-loop strides.
struct OperandAccess {
  const double *data = nullptr;
  double scalar = 0;
  int64_t base = 0;
  SmallVector<int64_t> stride;
};
} // namespace

/// Points of a linalg body run together (ScalarProgram::runBatch).
constexpr int64_t kBatch = 256;
/// A loop of fewer points than a cache line holds values: batches along it
/// would pay the body's dispatch every few values.
constexpr int64_t kShortLoop = 8;

/// Multiply-adds a thread of a contraction takes at least (below this a
/// thread costs more to start than it saves).
constexpr int64_t kWorkPerThread = int64_t(1) << 22;

/// GNNC_REFERENCE_THREADS, read once: the threads a contraction may use
/// (where unset, the machine's hardware threads, at most 16), or the error
/// of a value that is not a number from 1 to 1024 (every evaluation then
/// fails saying so).
struct ReferenceThreads {
  int64_t threads = 1;
  std::string error;
};
static const ReferenceThreads &referenceThreadsSetting() {
  static const ReferenceThreads setting = [] {
    ReferenceThreads r;
    const char *v = std::getenv("GNNC_REFERENCE_THREADS");
    if (!v || !*v) {
      unsigned hw = std::thread::hardware_concurrency();
      r.threads = std::clamp(hw, 1u, 16u);
      return r;
    }
    char *end = nullptr;
    errno = 0;
    long n = std::strtol(v, &end, 10);
    if (*end || errno || n < 1 || n > 1024)
      r.error = std::string("GNNC_REFERENCE_THREADS: expected a number of "
                            "threads from 1 to 1024 but got '") +
                v + "'";
    else
      r.threads = n;
    return r;
  }();
  return setting;
}
static int64_t referenceThreads() { return referenceThreadsSetting().threads; }

/// Runs `body` over every point of the loops `bounds` (at least one point),
/// in batches of up to `maxWidth` points along loop `batchLoop` (-1 for an
/// op without loops; with a `maxWidth` above 1, each point of a batch must
/// update its own elements of `results`): the other loops in their order,
/// innermost fastest, each batch one ScalarProgram::runBatch. `offset`
/// starts at the operands' bases. Operands contiguous along the batch loop
/// are read where they are (inits included: each batch reads its own
/// elements before it writes them); the others are copied in. Results are
/// stored rounded as `rounding` says (where each element is written once).
static void runInBatches(const ScalarProgram &body,
                         ArrayRef<OperandAccess> access,
                         MutableArrayRef<Tensor> results,
                         ArrayRef<Rounding> rounding, unsigned numInputs,
                         ArrayRef<int64_t> bounds, int batchLoop,
                         int64_t maxWidth, SmallVectorImpl<int64_t> &offset,
                         int sumTerm = -1) {
  int64_t numLoops = static_cast<int64_t>(bounds.size());
  int64_t extent = batchLoop >= 0 ? bounds[batchLoop] : 1;
  int64_t width = std::min(extent, maxWidth);
  // An operand's step from one point of a batch to the next.
  auto step = [&](size_t k) {
    return batchLoop >= 0 ? access[k].stride[batchLoop] : int64_t(0);
  };
  std::vector<double> scratch(size_t(body.numRegisters()) * width, 0.0);
  std::vector<double *> regs(body.numRegisters());
  for (size_t r = 0; r < regs.size(); ++r)
    regs[r] = scratch.data() + r * width;
  // Operand k's values of the batch of `w` points from `p`: `p` itself
  // where they are contiguous (and `inPlace`), else a copy in its scratch
  // register.
  auto bind = [&](size_t k, double *p, int64_t w, bool inPlace) {
    int64_t s = step(k);
    double *reg = scratch.data() + k * width;
    if (s == 1 && inPlace) {
      regs[k] = p;
      return;
    }
    for (int64_t l = 0; l < w; ++l)
      reg[l] = p[l * s];
    regs[k] = reg;
  };
  for (unsigned k = 0; k < numInputs; ++k)
    if (!access[k].data)
      std::fill(regs[k], regs[k] + width, access[k].scalar);
  SmallVector<int64_t> index(numLoops, 0);
  int64_t points = 1;
  for (auto [d, b] : llvm::enumerate(bounds))
    if (int64_t(d) != batchLoop)
      points *= b;
  for (int64_t it = 0; it < points; ++it) {
    for (int64_t first = 0; first < extent; first += width) {
      int64_t w = std::min(width, extent - first);
      if (batchLoop >= 0)
        index[batchLoop] = first;
      for (unsigned k = 0; k < numInputs; ++k)
        if (access[k].data)
          // (Only read: runBatch writes no block argument's register.)
          bind(k,
               const_cast<double *>(access[k].data) + offset[k] +
                   first * step(k),
               w, true);
      for (size_t r = 0; r < results.size(); ++r) {
        double *p = results[r].data.data() + offset[numInputs + r] +
                    first * step(numInputs + r);
        // (With several results, one's init may be yielded as another
        // result stored after it: copied then.)
        bind(numInputs + r, p, w, results.size() == 1);
      }
      body.runBatch(regs.data(), w, index.data(), batchLoop);
      if (sumTerm >= 0) {
        // One element takes the batch's terms in the points' order.
        double *p = results[0].data.data() + offset[numInputs];
        const double *t = regs[sumTerm];
        double acc = *p;
        for (int64_t l = 0; l < w; ++l)
          acc = acc + t[l];
        *p = acc;
        continue;
      }
      for (size_t r = 0; r < results.size(); ++r) {
        const double *reg = regs[body.yielded()[r]];
        int64_t s = step(numInputs + r);
        double *p = results[r].data.data() + offset[numInputs + r] + first * s;
        storeRounded(p, s, reg, w, rounding[r]);
      }
    }
    if (batchLoop >= 0)
      index[batchLoop] = 0;
    // Advance the odometer of the other loops, innermost fastest.
    for (int64_t d = numLoops - 1; d >= 0; --d) {
      if (d == batchLoop)
        continue;
      for (size_t k = 0; k < access.size(); ++k)
        offset[k] += access[k].stride[d];
      if (++index[d] < bounds[d])
        break;
      for (size_t k = 0; k < access.size(); ++k)
        offset[k] -= access[k].stride[d] * bounds[d];
      index[d] = 0;
    }
  }
}

/// Threads for a contraction of `work` multiply-adds whose split loop has
/// `extent` ranges (at least 1).
static int contractionThreads(int64_t work, int64_t extent) {
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>({referenceThreads(), extent, work / kWorkPerThread})));
}

/// The shared state of inRanges: `body` over [0, extent) in chunks of
/// `chunk`, the next one to take in `next`.
template <typename Body> struct SharedRanges {
  Body *body;
  int64_t extent, chunk;
  std::atomic<int64_t> next{0};
  /// Takes chunks until none is left.
  void work() {
    for (;;) {
      int64_t lo = next.fetch_add(chunk, std::memory_order_relaxed);
      if (lo >= extent)
        return;
      (*body)(lo, std::min(extent, lo + chunk));
    }
  }
  static void *run(void *self) {
    static_cast<SharedRanges *>(self)->work();
    return nullptr;
  }
};

/// Runs `body(lo, hi)` over ranges covering [0, extent) once, on the
/// calling thread and up to `threads - 1` others. The ranges are taken one
/// at a time by whichever thread is free: with several ranges a thread, a
/// thread that the machine runs late (its cores busy with other work, e.g.
/// PyTorch's own threads spinning after an op) leaves its share to the
/// others instead of holding up the end by a fixed part of the work. A
/// thread that cannot be started (a process at its thread limit) is no
/// error: the others take its share. (POSIX threads, not std::thread: this
/// library is built without exceptions, and std::thread reports that
/// failure by throwing.)
///
/// `perThread` ranges a thread on average: 8 where a range costs only its
/// own work; 1 where each range repeats a walk over other data (a split of
/// the inner of two loops walks the outer one again per range).
template <typename Body>
static void inRanges(int64_t extent, int threads, int perThread, Body body) {
  if (threads <= 1) {
    body(int64_t(0), extent);
    return;
  }
  SharedRanges<Body> shared;
  shared.body = &body;
  shared.extent = extent;
  shared.chunk =
      std::max<int64_t>(1, extent / (int64_t(perThread) * threads));
  std::vector<pthread_t> started;
  for (int t = 0; t + 1 < threads; ++t) {
    pthread_t id;
    if (pthread_create(&id, nullptr, &SharedRanges<Body>::run, &shared) == 0)
      started.push_back(id);
  }
  shared.work();
  for (pthread_t id : started)
    pthread_join(id, nullptr);
}

/// Whether any of `p[0, 8)` is other than +-0 (a NaN is): their bits
/// without the sign ORed together as integers, which the compiler
/// vectorises (a test per eight values instead of a branch per value).
static bool anyNonzero8(const double *p) {
  uint64_t any = 0;
  for (int l = 0; l < 8; ++l) {
    uint64_t bits;
    std::memcpy(&bits, p + l, sizeof(bits));
    any |= bits << 1;
  }
  return any != 0;
}

/// Writes the positions of the nonzeros (NaN included) of `p[0, n)` to
/// `index` (room for `n`), in order, and returns how many there are;
/// `finite` becomes whether every value is finite. Eight values at a time
/// are first tested together (anyNonzero8): a stretch of zeros (a
/// bag-of-words row) costs one test per eight values.
static int64_t scanRow(const double *p, int64_t n, int64_t *index,
                       bool &finite) {
  int64_t count = 0;
  bool allFinite = true;
  auto one = [&](int64_t q) {
    double v = p[q];
    allFinite &= std::isfinite(v);
    index[count] = q; // (count <= q: within the room)
    count += v != 0;
  };
  int64_t q = 0;
  for (; q + 8 <= n; q += 8) {
    if (!anyNonzero8(p + q)) // (a NaN is nonzero: looked at below)
      continue;
    for (int l = 0; l < 8; ++l)
      one(q + l);
  }
  for (; q < n; ++q)
    one(q);
  finite = allFinite;
  return count;
}

/// A product of scalars and rows summed into c (runContraction's row case
/// where one loop, `r`, sums into c and another, `p`, indexes its rows):
/// c[p][j] += v(p, r) * row(p, r)[j] for r = 0 .. r-1 in that order, j in
/// [0, n), row(p, r) = rows + p * rP + r * rR, v(p, r) = scalars[p * sP +
/// r * sR], c's row p at c + p * cP.
struct RowProduct {
  double *c = nullptr;
  int64_t cP = 0;
  const double *scalars = nullptr;
  int64_t sP = 0, sR = 0;
  const double *rows = nullptr;
  int64_t rP = 0, rR = 0;
  int64_t n = 0, r = 0;
  /// Zero scalars are skipped against the rows `finite` marks (null:
  /// nothing is skipped), the row of (p, r) being finite[r] (rowBy 1),
  /// finite[p] (rowBy 2) or finite[0] (rowBy 0).
  const char *finite = nullptr;
  int rowBy = 0;
  /// Every row is finite and the scalars of a row of c are contiguous
  /// (sR == 1): eight zero scalars are passed over with one test.
  bool zeroRuns = false;
};

/// The most terms of the sum a row of c takes at once (RowProduct's
/// chunks of r).
constexpr int64_t kRowProductChunk = 512;

/// Four doubles as one value (GCC's and Clang's vector extension): a
/// 32-byte register where the function is compiled for AVX2, two 16-byte
/// ones elsewhere. Loaded and stored through memcpy (any alignment).
typedef double Double4 __attribute__((vector_size(32)));

/// The terms a row of c takes from one chunk of r: `count` of them, either
/// all of the chunk's (`dense`: scalars `sv` sR apart, rows from `rowp` rR
/// apart, from r0 on) or those listed (`value[t]` times row `active[t]`).
struct RowTerms {
  bool dense;
  int64_t count, r0, sR, rR;
  const double *sv, *rowp;
  const int64_t *active;
  const double *value;
};

/// c's elements [j, j + 4V) of row `cp` take the terms `terms`, one at a
/// time in their order.
template <int V, bool Dense>
[[gnu::always_inline]] static inline void rowProductBlock(double *cp, int64_t j,
                                                          const RowTerms &terms) {
  Double4 acc[V];
  for (int l = 0; l < V; ++l)
    std::memcpy(&acc[l], cp + j + 4 * l, sizeof(Double4));
  for (int64_t t = 0; t < terms.count; ++t) {
    const double v = Dense ? terms.sv[(terms.r0 + t) * terms.sR] : terms.value[t];
    const double *rp =
        terms.rowp + (Dense ? terms.r0 + t : terms.active[t]) * terms.rR + j;
    const Double4 vv = {v, v, v, v};
    for (int l = 0; l < V; ++l) {
      Double4 x;
      std::memcpy(&x, rp + 4 * l, sizeof(Double4));
      acc[l] += vv * x;
    }
  }
  for (int l = 0; l < V; ++l)
    std::memcpy(cp + j + 4 * l, &acc[l], sizeof(Double4));
}

/// The same for one element, c[j].
template <bool Dense>
[[gnu::always_inline]] static inline void rowProductOne(double *cp, int64_t j,
                                                        const RowTerms &terms) {
  double acc = cp[j];
  for (int64_t t = 0; t < terms.count; ++t) {
    const double v = Dense ? terms.sv[(terms.r0 + t) * terms.sR] : terms.value[t];
    acc += v * terms.rowp[(Dense ? terms.r0 + t : terms.active[t]) * terms.rR + j];
  }
  cp[j] = acc;
}

/// A row of c, n elements, takes `terms`: blocks of 4V elements, then of
/// four, then one at a time.
template <int V, bool Dense>
[[gnu::always_inline]] static inline void rowProductRow(double *cp, int64_t n,
                                                        const RowTerms &terms) {
  int64_t j = 0;
  for (; j + 4 * V <= n; j += 4 * V)
    rowProductBlock<V, Dense>(cp, j, terms);
  for (; j + 4 <= n; j += 4)
    rowProductBlock<1, Dense>(cp, j, terms);
  for (; j < n; ++j)
    rowProductOne<Dense>(cp, j, terms);
}

/// RowProduct `q` over c's rows [p0, p1), chunk by chunk of r. Where zero
/// scalars may be skipped, a row's nonzero terms are listed first, as long
/// as the rows before it had a quarter or more of zeros (bag-of-words
/// features, ReLU outputs; tried again every 16 rows); otherwise (and
/// where nothing may be skipped) every term is taken: adding a skippable
/// term changes no bit (see runContraction), so both give the same sums.
/// Blocks of 4V elements of c's row stay in registers while they take a
/// chunk's terms; every element takes its terms one at a time in the order
/// of r (the point by point sums, bit for bit).
template <int V>
[[gnu::always_inline]] static inline void rowProductRows(const RowProduct &q,
                                                         int64_t p0, int64_t p1) {
  // Chunks of r whose rows (chunk x n values) stay in the L2 cache while
  // every row of c in the range takes them.
  const int64_t chunk = std::clamp<int64_t>(
      (int64_t(256) << 10) / (8 * std::max<int64_t>(q.n, 1)), 16,
      kRowProductChunk);
  int64_t active[kRowProductChunk];
  double value[kRowProductChunk];
  for (int64_t r0 = 0; r0 < q.r; r0 += chunk) {
    const int64_t r1 = std::min(q.r, r0 + chunk);
    bool listing = q.finite != nullptr;
    for (int64_t p = p0; p < p1; ++p) {
      // (Every 16th row lists again: the rows may have become sparser.)
      listing |= q.finite != nullptr && (p - p0) % 16 == 0;
      RowTerms terms{!listing, r1 - r0, r0, q.sR, q.rR, q.scalars + p * q.sP,
                     q.rows + p * q.rP, active, value};
      if (listing) {
        const double *sv = terms.sv;
        const char rowFinite = q.finite[q.rowBy == 2 ? p : 0];
        int64_t count = 0;
        for (int64_t r = r0; r < r1; ++r) {
          if (q.zeroRuns && r + 8 <= r1 && !anyNonzero8(sv + r)) {
            r += 7;
            continue;
          }
          const double v = sv[r * q.sR];
          const bool skip =
              v == 0 && (q.rowBy == 1 ? q.finite[r] != 0 : rowFinite != 0);
          active[count] = r;
          value[count] = v;
          count += !skip;
        }
        terms.count = count;
        // Three quarters or more of the terms taken: the next rows take
        // them all (listing them would cost more than it saves).
        listing = 4 * count < 3 * (r1 - r0);
      }
      if (terms.count == 0)
        continue;
      double *cp = q.c + p * q.cP;
      if (terms.dense)
        rowProductRow<V, true>(cp, q.n, terms);
      else
        rowProductRow<V, false>(cp, q.n, terms);
    }
  }
}

/// rowProductRows with 16-byte vectors (eight registers of two sums) ...
static void rowProductsSse(const RowProduct &q, int64_t p0, int64_t p1) {
  rowProductRows<4>(q, p0, p1);
}

#if defined(__x86_64__)
/// ... and with 32-byte ones (eight registers of four), where the machine
/// has them. (No FMA: a fused multiply-add rounds once, which would change
/// the sums' bits.)
[[gnu::target("avx2")]] static void rowProductsAvx2(const RowProduct &q,
                                                    int64_t p0, int64_t p1) {
  rowProductRows<8>(q, p0, p1);
}
#endif

/// RowProduct `q` over c's rows [p0, p1), with the widest vectors the
/// machine has (the same sums bit for bit either way).
static void rowProducts(const RowProduct &q, int64_t p0, int64_t p1) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2)
    return rowProductsAvx2(q, p0, p1);
#endif
  rowProductsSse(q, p0, p1);
}

/// A contraction's operands `a0` and `b0`, result `cData` (its access
/// `cAccess`), loops `bounds`: c += a * b, every element of c taking its
/// terms one at a time in the order of the reduction loop (the point by
/// point sums, bit for bit), large ones on several threads.
static void runContraction(const OperandAccess &a0, const OperandAccess &b0,
                           const OperandAccess &cAccess,
                           MutableArrayRef<double> cResult,
                           ArrayRef<int64_t> bounds) {
  double *cData = cResult.data();
  OperandAccess aa = a0, ba = b0;
  ArrayRef<int64_t> cs = cAccess.stride;
  std::array<int, 3> order = {0, 1, 2};
  auto units = [&](int d) {
    return (aa.stride[d] == 1) + (ba.stride[d] == 1) + (cs[d] == 1);
  };
  auto span = [&](int d) { return aa.stride[d] + ba.stride[d] + cs[d]; };
  llvm::sort(order, [&](int x, int y) {
    if ((cs[x] == 1) != (cs[y] == 1))
      return cs[y] == 1;
    if (units(x) != units(y))
      return units(x) < units(y);
    return span(x) > span(y);
  });
  auto [d0, d1, d2] = order;
  // An operand that the inner loop walks with a stride other than 0 or 1
  // (W in x W^T) is copied with that loop's dimension innermost, so that
  // the inner loop reads it contiguously.
  std::vector<double> relaid[2];
  for (int k = 0; k < 2; ++k) {
    OperandAccess &x = k == 0 ? aa : ba;
    if (x.stride[d2] == 0 || x.stride[d2] == 1 || x.stride[d0] != 0)
      continue;
    int64_t rows = bounds[d1], cols = bounds[d2];
    std::vector<double> &t = relaid[k];
    t.resize(rows * cols);
    const double *src = x.data + x.base;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < cols; ++q)
        t[r * cols + q] = src[r * x.stride[d1] + q * x.stride[d2]];
    x.data = t.data();
    x.base = 0;
    x.stride[d1] = cols;
    x.stride[d2] = 1;
  }
  const double *a = aa.data + aa.base, *b = ba.data + ba.base;
  double *c = cData + cAccess.base;
  // The inner loop specialised for its common stride patterns, so that
  // the compiler keeps the sum in a register or vectorises across
  // independent elements of c; each element of c still takes its terms
  // one at a time in the order of the reduction loop (the same sums,
  // bit for bit, in every variant).
  const int64_t n = bounds[d2], as = aa.stride[d2], bs = ba.stride[d2],
                s = cs[d2];
  auto inner = [&](double *cp, const double *ap, const double *bp) {
    if (s == 0) { // the reduction innermost: one element of c
      double acc = *cp;
      if (as == 1 && bs == 1)
        for (int64_t k = 0; k < n; ++k)
          acc += ap[k] * bp[k];
      else
        for (int64_t k = 0; k < n; ++k)
          acc += ap[k * as] * bp[k * bs];
      *cp = acc;
    } else if (s == 1 && as == 0 && bs == 1) { // a row of c += a * b's row
      const double x = *ap;
      for (int64_t k = 0; k < n; ++k)
        cp[k] += x * bp[k];
    } else if (s == 1 && bs == 0 && as == 1) {
      const double x = *bp;
      for (int64_t k = 0; k < n; ++k)
        cp[k] += ap[k] * x;
    } else {
      for (int64_t k = 0; k < n; ++k)
        cp[k * s] += ap[k * as] * bp[k * bs];
    }
  };
  // Where the inner loop adds a scalar times a row (x W's rows of W),
  // zero scalars are skipped when that changes no bit: a zero times a row
  // of finite values is a row of zeros (of either sign), and adding a zero
  // to an element of c leaves it as it is unless it is -0.0 (-0 + +0 is
  // +0), which no element of c becomes if it does not start so (in round
  // to nearest a sum is -0 only when both terms are). So: zeros are
  // skipped when no element of c starts as -0.0, for the rows all of whose
  // values are finite (a zero times an infinity or NaN is NaN). Bag-of-
  // words features (Cora's are 98.7 % zeros) then cost their nonzeros.
  bool rowCase = s == 1 && ((as == 0 && bs == 1) || (bs == 0 && as == 1));
  const OperandAccess &row = as == 0 ? ba : aa; // (the other gives the scalar)
  // The loop (among d0, d1) the row moves along; -1: the same row always.
  int rowLoop = row.stride[d0] != 0 ? 0 : row.stride[d1] != 0 ? 1 : -1;
  bool skipZeros = rowCase && (row.stride[d0] == 0 || row.stride[d1] == 0) &&
                   llvm::none_of(cResult, [](double v) {
                     return v == 0 && std::signbit(v);
                   });
  const double *rowBase = row.data + row.base;
  const int64_t rows = rowLoop < 0 ? 1 : bounds[rowLoop == 0 ? d0 : d1],
                rowStep = rowLoop < 0 ? 0 : row.stride[rowLoop == 0 ? d0 : d1];
  const OperandAccess &scalar = as == 0 ? aa : ba;
  const double *scalars = scalar.data + scalar.base;
  // Rows mostly of zeros that several scalars multiply (x's rows in
  // dC^T x, a weight gradient over bag-of-words features) are walked by
  // their nonzeros: for a finite scalar, each zero of the row adds a zero
  // (the same argument as above), the other elements take their terms in
  // the same order. Lists are made for rows used twice or more, holding at
  // least 2^16 values, at least seven eighths of them zeros (the listing is
  // given up as soon as it has found more nonzeros than that: denser rows,
  // ReLU outputs, run faster whole in RowProduct's vectors than element by
  // listed element). One pass over the rows finds both their finiteness
  // and their nonzeros.
  std::vector<char> finiteRow;
  std::vector<int64_t> nzStart, nzIndex;
  if (skipZeros) {
    bool listing = bounds[d0] * bounds[d1] >= 2 * rows &&
                   rows * n >= (int64_t(1) << 16);
    std::vector<int64_t> found(n);
    finiteRow.resize(rows);
    if (listing)
      nzStart.reserve(rows + 1);
    for (int64_t r = 0; r < rows; ++r) {
      bool finite;
      int64_t count = scanRow(rowBase + r * rowStep, n, found.data(), finite);
      finiteRow[r] = finite;
      if (!listing)
        continue;
      nzStart.push_back(static_cast<int64_t>(nzIndex.size()));
      nzIndex.insert(nzIndex.end(), found.begin(), found.begin() + count);
      if (8 * int64_t(nzIndex.size()) > rows * n) {
        listing = false;
        nzStart.clear(), nzIndex.clear();
        nzStart.shrink_to_fit(), nzIndex.shrink_to_fit();
      }
    }
    if (listing)
      nzStart.push_back(static_cast<int64_t>(nzIndex.size()));
  }
  const bool allRowsFinite =
      llvm::all_of(finiteRow, [](char finite) { return finite != 0; });
  const bool skipChunks = skipZeros && scalar.stride[d1] == 1 && allRowsFinite;
  // The row case where one of the outer loops sums into c and the other
  // indexes c's rows (x W, dC W^T, the weight gradient dC^T x over dense
  // rows): RowProduct, c's rows split among the threads (the same sums bit
  // for bit whatever their number). Sparse rows walked by their nonzero
  // lists take the loop below.
  const int sumLoop = cs[d0] == 0 && cs[d1] != 0   ? 0
                      : cs[d1] == 0 && cs[d0] != 0 ? 1
                                                   : -1;
  // Except where the sum is the outer loop and its scalars are mostly
  // zeros in runs along c's rows (Cora's bag-of-words x in x^T dC): the
  // loop below skips eight of them with one test, which RowProduct, walking
  // down the scalars' columns, cannot. (Their density from the first
  // 2^16 scalars.)
  bool sparseRuns = false;
  if (skipChunks && sumLoop == 0) {
    const int64_t perRow = bounds[d1],
                  rowsSeen = std::min<int64_t>(
                      bounds[d0], std::max<int64_t>(1, 65536 / std::max<int64_t>(perRow, 1)));
    int64_t nonzero = 0;
    for (int64_t i = 0; i < rowsSeen; ++i)
      for (int64_t j = 0; j < perRow; ++j)
        nonzero += scalars[i * scalar.stride[d0] + j] != 0;
    sparseRuns = 4 * nonzero < rowsSeen * perRow;
  }
  // And except where the sum is the outer loop and c's rows are narrow
  // (a 64 x 4 weight gradient over 200,000 edges): RowProduct would walk
  // the scalars down their columns there, a block of a few values a term.
  // Where the scalars run along c's columns and the rows do not move with
  // them (dM^T edge_attr), the product transposed, c^T[j][p] += row(r)[j] *
  // scalar(r, p), is RowProduct's case with wide rows (the scalars' own):
  // c^T is made, takes the terms in the order of r, and is written back.
  // Otherwise the loop below (c stays in the L1 cache there).
  const bool narrowOuterSum = sumLoop == 0 && n < 16;
  if (rowCase && narrowOuterSum && nzStart.empty() && !sparseRuns &&
      scalar.stride[d1] == 1 && row.stride[d1] == 0 && bounds[d1] >= 16) {
    const int64_t wide = bounds[d1], cStride = cs[d1];
    std::vector<double> ct(static_cast<size_t>(n * wide));
    for (int64_t p = 0; p < wide; ++p)
      for (int64_t j = 0; j < n; ++j)
        ct[j * wide + p] = c[p * cStride + j];
    RowProduct q;
    q.c = ct.data();
    q.cP = wide;
    q.scalars = rowBase;
    q.sP = 1;
    q.sR = row.stride[d0];
    q.rows = scalars;
    q.rP = 0;
    q.rR = scalar.stride[d0];
    q.n = wide;
    q.r = bounds[d0];
    // (Every term taken: the same sums whether or not zeros are skipped.)
    inRanges(n, contractionThreads(bounds[d0] * bounds[d1] * n, n), 1,
             [&](int64_t lo, int64_t hi) { rowProducts(q, lo, hi); });
    for (int64_t p = 0; p < wide; ++p)
      for (int64_t j = 0; j < n; ++j)
        c[p * cStride + j] = ct[j * wide + p];
    return;
  }
  if (rowCase && sumLoop >= 0 && nzStart.empty() && !sparseRuns &&
      !narrowOuterSum) {
    const int rl = sumLoop == 0 ? d0 : d1, pl = sumLoop == 0 ? d1 : d0;
    RowProduct q;
    q.c = c;
    q.cP = cs[pl];
    q.scalars = scalars;
    q.sP = scalar.stride[pl];
    q.sR = scalar.stride[rl];
    q.rows = rowBase;
    q.rP = row.stride[pl];
    q.rR = row.stride[rl];
    q.n = n;
    q.r = bounds[rl];
    q.finite = skipZeros ? finiteRow.data() : nullptr;
    q.rowBy = rowLoop < 0 ? 0 : rowLoop == sumLoop ? 1 : 2;
    q.zeroRuns = skipZeros && q.sR == 1 && allRowsFinite;
    const int64_t rowsOfC = bounds[pl];
    // Each range of c's rows walks all of r's rows when those do not move
    // with p: where they are many (dC^T x, x's rows; not W's in x W), one
    // range a thread.
    const bool sharedRowsLarge = q.rP == 0 && q.r * n > (int64_t(1) << 17);
    inRanges(rowsOfC,
             contractionThreads(bounds[d0] * bounds[d1] * n, rowsOfC),
             sharedRowsLarge ? 1 : 8,
             [&](int64_t lo, int64_t hi) { rowProducts(q, lo, hi); });
    return;
  }
  // Large products run on several threads, each over its own range of a
  // loop that indexes c (the outer one where it does): every element of c
  // is updated by one thread, in the same order, so the sums are the same
  // bit for bit whatever the number of threads.
  int split = cs[d0] != 0 ? 0 : cs[d1] != 0 ? 1 : -1;
  int64_t extent = split < 0 ? 1 : bounds[split == 0 ? d0 : d1];
  int threads = split < 0 ? 1
                          : contractionThreads(bounds[d0] * bounds[d1] * n,
                                               extent);
  // (The strides as locals: the pair loop below runs once per scalar.)
  const int64_t c0 = cs[d0], c1 = cs[d1], a0s = aa.stride[d0],
                a1s = aa.stride[d1], b0s = ba.stride[d0], b1s = ba.stride[d1],
                s0 = scalar.stride[d0], s1 = scalar.stride[d1],
                r0 = row.stride[d0], r1 = row.stride[d1];
  inRanges(extent, threads, split == 0 ? 8 : 1, [&](int64_t lo, int64_t hi) {
    const int64_t i0 = split == 0 ? lo : 0, i1 = split == 0 ? hi : bounds[d0];
    const int64_t j0 = split == 1 ? lo : 0, j1 = split == 1 ? hi : bounds[d1];
    for (int64_t i = i0; i < i1; ++i) {
      if (!skipZeros) {
        for (int64_t j = j0; j < j1; ++j)
          inner(c + i * c0 + j * c1, a + i * a0s + j * a1s,
                b + i * b0s + j * b1s);
        continue;
      }
      const double *sv = scalars + i * s0;
      for (int64_t j = j0; j < j1; ++j) {
        // Eight contiguous zero scalars against finite rows add nothing:
        // skipped with one vectorised test (x's bag-of-words rows in x W).
        if (skipChunks && j + 8 <= j1 && !anyNonzero8(sv + j)) {
          j += 7;
          continue;
        }
        const double v = sv[j * s1];
        const int64_t r = rowLoop < 0 ? 0 : rowLoop == 0 ? i : j;
        if (v == 0 && finiteRow[r])
          continue;
        if (!nzStart.empty() && std::isfinite(v)) {
          double *cp = c + i * c0 + j * c1;
          const double *rp = rowBase + i * r0 + j * r1;
          for (int64_t q = nzStart[r]; q < nzStart[r + 1]; ++q)
            cp[nzIndex[q]] += v * rp[nzIndex[q]];
          continue;
        }
        inner(c + i * c0 + j * c1, a + i * a0s + j * a1s, b + i * b0s + j * b1s);
      }
    }
  });
}

LogicalResult Interpreter::linalgOp(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return op->emitOpError("expects tensor operands in the reference evaluator");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  int64_t numLoops = op.getNumLoops();
  SmallVector<int64_t> bounds(numLoops, -1);
  SmallVector<OperandAccess> access;
  for (OpOperand &operand : op->getOpOperands()) {
    OperandAccess a;
    a.stride.assign(numLoops, 0);
    auto it = env.find(operand.get());
    if (it == env.end())
      return op->emitOpError() << "has no value for operand #"
                               << operand.getOperandNumber();
    AffineMap map = maps[operand.getOperandNumber()];
    if (!it->second.tensor) {
      a.scalar = it->second.scalar;
      access.push_back(a);
      continue;
    }
    const Tensor &t = *it->second.tensor;
    if (static_cast<int64_t>(map.getNumResults()) != t.rank())
      return op->emitOpError() << "operand #" << operand.getOperandNumber()
                               << " has rank " << t.rank()
                               << " but its indexing map has "
                               << map.getNumResults() << " results";
    a.data = t.data.data();
    int64_t stride = 1;
    for (int64_t r = t.rank() - 1; r >= 0; --r) {
      AffineExpr e = map.getResult(r);
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        unsigned pos = d.getPosition();
        if (bounds[pos] < 0) {
          bounds[pos] = t.shape[r];
        } else if (bounds[pos] != t.shape[r]) {
          return op->emitOpError()
                 << "has inconsistent sizes for loop d" << pos << ": "
                 << bounds[pos] << " and " << t.shape[r] << " (operand #"
                 << operand.getOperandNumber() << " of shape "
                 << t.shapeString() << ")";
        }
        a.stride[pos] += stride;
      } else if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        if (c.getValue() < 0 || c.getValue() >= t.shape[r])
          return op->emitOpError() << "indexes operand #"
                                   << operand.getOperandNumber()
                                   << " out of bounds";
        a.base += c.getValue() * stride;
      } else {
        return op->emitOpError("has an indexing map the reference evaluator "
                               "does not support (only dimensions and "
                               "constants)");
      }
      stride *= t.shape[r];
    }
    access.push_back(a);
  }
  for (int64_t d = 0; d < numLoops; ++d)
    if (bounds[d] < 0)
      return op->emitOpError() << "has no operand that sizes loop d" << d;

  // Results start as copies of the inits; an init whose last use this is,
  // that no other operand of the op names and no other value shares, is
  // taken over instead (its buffer becomes the result's).
  unsigned numInputs = op.getNumDpsInputs();
  SmallVector<Tensor> results;
  for (OpOperand &init : op.getDpsInitsMutable())
    results.push_back(llvm::count(op->getOperands(), init.get()) == 1
                          ? takeOrCopy(init.get())
                          : *env[init.get()].tensor);

  SmallVector<Rounding> rounding(results.size(), Rounding::None);
  if (isContraction(op) && access[0].data && access[1].data) {
    runContraction(access[0], access[1], access[2], results[0].data, bounds);
  } else {
    FailureOr<ScalarProgram> body = ScalarProgram::compile(
        op->getRegion(0).front(), [&](Value v) -> FailureOr<double> {
          auto it = env.find(v);
          if (it == env.end() || it->second.tensor)
            return op->emitOpError("uses a value from outside its body that "
                                   "is not a scalar");
          return it->second.scalar;
        });
    if (failed(body))
      return failure();
    if (body->yielded().size() != results.size())
      return op->emitOpError("yields a different number of values than it "
                             "has inits");
    SmallVector<int64_t> offset(access.size(), 0);
    for (size_t k = 0; k < access.size(); ++k)
      offset[k] = access[k].base;
    int64_t total = 1;
    for (int64_t b : bounds)
      total *= b;
    // The points are run in batches along a loop that indexes every output
    // once (each point of a batch updates elements of its own), the
    // innermost such loop: the body's dispatch is paid once per batch. The
    // other loops keep their order, so each element takes its terms in the
    // same order as point by point. Without such a loop (a reduction to a
    // scalar), one point at a time along the innermost loop.
    // (Where that loop is shorter than a cache line of values, a head's 4
    // values of an edge, the longest such loop instead, the edges: any loop
    // that indexes every output once gives each element its terms in the
    // same order. A longer inner loop is kept: a batch along an outer loop
    // would read its operands a cache line per value.)
    int batchLoop = -1;
    for (int64_t d = numLoops - 1; d >= 0; --d) {
      bool each = bounds[d] > 1;
      for (size_t r = 0; r < results.size() && each; ++r)
        each = llvm::count_if(maps[numInputs + r].getResults(),
                              [&](AffineExpr e) {
                                return e == getAffineDimExpr(
                                                d, op->getContext());
                              }) == 1;
      if (each && (batchLoop < 0 || (bounds[batchLoop] < kShortLoop &&
                                     bounds[d] > bounds[batchLoop])))
        batchLoop = static_cast<int>(d);
    }
    // Without such a loop, a body that sums into one element (the result's
    // only element, `o + t` with t free of o: sum(x * dy), an eps's
    // gradient) computes t for a batch along the innermost loop and adds
    // the terms one at a time in order; others run point by point.
    int sumTerm = -1;
    if (batchLoop < 0 && results.size() == 1 &&
        llvm::all_of(access[numInputs].stride,
                     [](int64_t st) { return st == 0; }))
      sumTerm = body->sumTermRegister(static_cast<int>(numInputs));
    // Where every point writes elements of its own (each result's map a
    // permutation of the loops), results are rounded as they are stored,
    // while in cache, not in a pass of their own after.
    if (sumTerm < 0 &&
        llvm::all_of(ArrayRef<AffineMap>(maps).drop_front(numInputs),
                     [](AffineMap m) { return m.isPermutation(); }))
      for (auto [r, result] : llvm::enumerate(op->getResults()))
        rounding[r] = roundingOf(result);
    if (total > 0)
      runInBatches(*body, access, results, rounding, numInputs, bounds,
                   batchLoop >= 0 ? batchLoop : int(numLoops) - 1,
                   batchLoop >= 0 || sumTerm >= 0 ? kBatch : 1, offset,
                   sumTerm);
  }
  for (auto [r, result] : llvm::enumerate(op->getResults()))
    setTensor(result, std::move(results[r]), rounding[r] != Rounding::None);
  return success();
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult Interpreter::execute(Operation &op) {
  LogicalResult result =
      llvm::TypeSwitch<Operation *, LogicalResult>(&op)
          .Case([&](mlir::gnn::GatherOp o) { return gather(o); })
          .Case([&](mlir::gnn::SddmmOp o) { return sddmm(o); })
          .Case([&](mlir::gnn::EdgeSoftmaxOp o) { return edgeSoftmax(o); })
          .Case([&](mlir::gnn::SpmmOp o) { return spmm(o); })
          .Case([&](mlir::gnn::ReduceOp o) { return reduce(o); })
          .Case([&](mlir::gnn::DegreeOp o) { return degree(o); })
          .Case([&](mlir::gnn::ExtremumGradOp o) { return extremumGrad(o); })
          .Case([&](arith::ConstantOp o) { return constant(o); })
          .Case([&](tensor::EmptyOp o) -> LogicalResult {
            auto type = o.getType();
            std::vector<int64_t> shape(type.getShape().begin(),
                                       type.getShape().end());
            unsigned next = 0;
            for (int64_t &d : shape) {
              if (!ShapedType::isDynamic(d))
                continue;
              double v = env[o.getDynamicSizes()[next++]].scalar;
              if (v < 0)
                return o.emitOpError() << "has a negative size " << v;
              d = static_cast<int64_t>(v);
            }
            // An empty tensor that only inits ops which write each of its
            // elements once without reading it (linalg.fill, elementwise
            // bodies that do not read their output) is not zeroed first:
            // its values never reach a result.
            bool written = !o->use_empty() &&
                           llvm::all_of(o->getUses(), [](OpOperand &use) {
                             if (isa<tensor::DimOp>(use.getOwner()))
                               return true;
                             auto l = dyn_cast<linalg::LinalgOp>(use.getOwner());
                             return l && l.isDpsInit(&use) &&
                                    !l.payloadUsesValueFromOperand(&use) &&
                                    l.getNumReductionLoops() == 0 &&
                                    l.getMatchingIndexingMap(&use).isPermutation();
                           });
            setTensor(o.getResult(),
                      written ? Tensor::uninitialized(shape) : Tensor(shape),
                      /*exact=*/true);
            return success();
          })
          .Case([&](tensor::DimOp o) -> LogicalResult {
            FailureOr<const Tensor *> t = tensorOf(o, o.getSource(), "source");
            if (failed(t))
              return failure();
            int64_t d = static_cast<int64_t>(env[o.getIndex()].scalar);
            if (d < 0 || d >= (*t)->rank())
              return o.emitOpError() << "asks for dimension " << d
                                     << " of a rank-" << (*t)->rank()
                                     << " tensor";
            env[o.getResult()].scalar = static_cast<double>((*t)->shape[d]);
            return success();
          })
          .Case([&](tensor::ExpandShapeOp o) {
            auto groups = o.getReassociationIndices();
            return reshape(o, o.getSrc(), o.getResult(), groups, true);
          })
          .Case([&](tensor::CollapseShapeOp o) {
            auto groups = o.getReassociationIndices();
            return reshape(o, o.getSrc(), o.getResult(), groups, false);
          })
          .Case([&](tensor::CastOp o) -> LogicalResult {
            FailureOr<const Tensor *> t = tensorOf(o, o.getSource(), "source");
            if (failed(t))
              return failure();
            env[o.getResult()] = env[o.getSource()];
            return success();
          })
          .Case([&](linalg::LinalgOp o) { return linalgOp(o); })
          .Default([&](Operation *o) -> LogicalResult {
            if (o->getNumResults() == 1 && o->getNumRegions() == 0 &&
                !isa<ShapedType>(o->getResult(0).getType()) &&
                llvm::all_of(o->getOperandTypes(), [](Type t) {
                  return !isa<ShapedType>(t);
                }) &&
                isa<arith::ArithDialect, math::MathDialect>(o->getDialect())) {
              SmallVector<double> operands;
              for (Value v : o->getOperands())
                operands.push_back(env[v].scalar);
              FailureOr<double> v = ScalarProgram::evaluateOp(o, operands);
              if (failed(v))
                return failure();
              env[o->getResult(0)].scalar = *v;
              return success();
            }
            return o->emitOpError("is not supported by the reference evaluator");
          });
  if (failed(result))
    return failure();
  for (Value r : op.getResults()) {
    auto it = env.find(r);
    if (it != env.end() && it->second.tensor &&
        failed(checkResult(&op, r, *it->second.tensor)))
      return failure();
  }
  return success();
}

FailureOr<std::vector<Tensor>> Interpreter::run(func::FuncOp func,
                                                std::vector<Tensor> inputs) {
  if (func.isExternal())
    return func.emitError("expects a function with a body");
  FailureOr<std::vector<ArgumentSpec>> specs = resolveArguments(func, graph);
  if (failed(specs))
    return failure();
  for (Type type : func.getArgumentTypes())
    if (auto g = dyn_cast<mlir::gnn::GraphType>(type)) {
      bipartite = g.getBipartite();
      if (g.getTyped() && !graph.typed())
        return func.emitError()
               << "takes a typed graph ("
               << (bipartite ? "!gnn.graph<bipartite, typed>"
                             : "!gnn.graph<typed>")
               << ") but graph '"
               << graph.name
               << "' has no edge types (a generator takes relations=R)";
    }
  size_t want = specs->size() - 1;
  if (inputs.size() != want)
    return func.emitError() << "expects " << want << " inputs but got "
                            << inputs.size();
  size_t next = 0;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    const ArgumentSpec &spec = (*specs)[i];
    if (spec.isGraph)
      continue;
    Tensor &t = inputs[next++];
    if (t.shape != spec.shape)
      return func.emitError() << ::gnn::wrongInputShape(i, spec, graph.name, t.shape);
    env[arg].tensor = std::make_shared<Tensor>(std::move(t));
  }
  std::vector<Tensor> outputs;
  Block &body = func.getBody().front();
  // Values are freed after their last use (the backward of a large graph
  // holds tens of edge-sized tensors otherwise).
  llvm::DenseMap<Operation *, SmallVector<Value>> dies = lastUses(body);
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
        auto it = env.find(v);
        if (it == env.end() || !it->second.tensor)
          return ret.emitOpError("returns a value that is not a tensor");
        // The last return of a tensor nothing else shares takes it over.
        bool again = llvm::is_contained(ret.getOperands().drop_front(k + 1), v);
        if (!again && it->second.tensor.use_count() == 1)
          outputs.push_back(std::move(*it->second.tensor));
        else
          outputs.push_back(*it->second.tensor);
      }
      return outputs;
    }
    auto dies_here = dies.find(&op);
    dying = dies_here != dies.end() ? ArrayRef<Value>(dies_here->second)
                                    : ArrayRef<Value>();
    if (failed(execute(op)))
      return failure();
    if (auto it = dies.find(&op); it != dies.end())
      for (Value v : it->second)
        env.erase(v);
  }
  return func.emitError("expects the function to end with func.return");
}

namespace gnn {
FailureOr<std::vector<Tensor>> evaluateReference(func::FuncOp func,
                                                 const HostGraph &graph,
                                                 std::vector<Tensor> inputs,
                                                 Storage storage) {
  if (func.getBody().getBlocks().size() > 1)
    return func.emitError("expects a function with a single block");
  if (const std::string &e = referenceThreadsSetting().error; !e.empty())
    return func.emitError(e);
  if (failed(checkHostMemory(func, graph, /*argumentsOnly=*/false)))
    return failure();
  Interpreter interp(graph, storage);
  return interp.run(func, std::move(inputs));
}
} // namespace gnn
