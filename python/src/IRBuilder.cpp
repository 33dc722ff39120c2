//===- IRBuilder.cpp - gnn functions built from Python, op by op ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `gnnc._gnnc.FunctionBuilder`: builds one `gnn`-dialect function with
/// MLIR's builders, op by op, as `gnnc.ir` (python/gnnc/ir.py) asks. Values
/// cross to Python as integer ids; shapes, kinds, affine maps and the scalar
/// bodies of `linalg.generic` cross as structures, never as IR text. Every op
/// carries the Python line that asked for it, so the verifier's diagnostics
/// point at the layer's source.
///
//===----------------------------------------------------------------------===//

#include "Native.h"

#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <cstring>
#include <map>

namespace gnnc_py {
namespace {

using mlir::gnn::EdgeEnd;
using mlir::gnn::ReduceKind;
using mlir::gnn::SddmmKind;

/// The Python line an op comes from: (file, line).
using Where = std::pair<std::string, int64_t>;

/// One map result: (true, d) is the dimension d, (false, k) the constant k.
using MapResult = std::pair<bool, int64_t>;

/// An operand of a body op: (0, i) block argument i, (1, j) the result of
/// body op j, (2, id) the function-level value `id` (a scalar).
using BodyRef = std::pair<int, int64_t>;

/// One scalar op of a body: (name, operands, predicate of arith.cmpf).
using BodyOp = std::tuple<std::string, std::vector<BodyRef>, std::string>;

[[noreturn]] void refuse(const std::string &message) {
  throw std::invalid_argument("gnnc.ir: " + message);
}

/// "[N, 16]" style: a dynamic size is "?".
std::string shapeText(RankedTensorType t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.getRank(); ++i) {
    int64_t d = t.getDimSize(i);
    s += (i ? ", " : "") + (ShapedType::isDynamic(d) ? std::string("?")
                                                     : std::to_string(d));
  }
  return s + "]";
}

class FunctionBuilder {
public:
  FunctionBuilder(const std::string &name, const std::string &element,
                  bool bipartite, bool typed)
      : module(Module::empty("<gnnc.ir:" + name + ">")),
        ctx(module->contextRef()), builder(&ctx) {
    elementType = parseElement(element);
    if (name.empty())
      refuse("the function needs a name");
    ModuleOp m = module->op();
    builder.setInsertionPointToEnd(m.getBody());
    auto type = builder.getFunctionType(
        {mlir::gnn::GraphType::get(&ctx, bipartite, typed)}, {});
    function = func::FuncOp::create(builder, UnknownLoc::get(&ctx), name, type);
    Block *entry = function.addEntryBlock();
    graph = entry->getArgument(0);
    graph.setLoc(NameLoc::get(builder.getStringAttr("g"), graph.getLoc()));
    builder.setInsertionPointToEnd(entry);
  }

  /// A tensor argument of `shape` (-1: the dynamic leading dimension) in
  /// `domain` ("node", "edge", "src" or "dst": gnn.domain), of the element
  /// type `element` ("": the function's; another one is stored so and
  /// converted to the function's type by `convert` before any op reads
  /// it: a float32 parameter of a bfloat16 function under autocast).
  int64_t argument(const std::vector<int64_t> &shape, const std::string &domain,
                   bool differentiable, const std::string &element,
                   const Where &where) {
    live();
    if (!values.empty() && hasBody)
      refuse("arguments come before the first op");
    RankedTensorType type = tensorType(shape);
    if (!element.empty())
      type = RankedTensorType::get(type.getShape(), parseElement(element));
    Block &entry = function.getBody().front();
    BlockArgument arg = entry.addArgument(type, at(where));
    SmallVector<NamedAttribute> attrs;
    std::optional<mlir::gnn::Domain> d = mlir::gnn::parseDomain(domain);
    if (!d)
      refuse("a tensor argument's domain is 'node', 'edge', 'src' or 'dst', "
             "got '" + domain + "'");
    bool bipartite =
        cast<mlir::gnn::GraphType>(graph.getType()).getBipartite();
    bool side = *d == mlir::gnn::Domain::Src || *d == mlir::gnn::Domain::Dst;
    bool dynamic = !shape.empty() && shape[0] < 0;
    // A weight (static leading size) has no domain.
    if (side ? !bipartite : (bipartite && dynamic && *d == mlir::gnn::Domain::Node))
      refuse(bipartite ? "a bipartite graph's node tensors are 'src' or 'dst'"
                       : "'src' and 'dst' tensors need a bipartite graph");
    if (*d != mlir::gnn::Domain::Node)
      attrs.push_back(builder.getNamedAttr("gnn.domain",
                                           builder.getStringAttr(domain)));
    if (differentiable)
      attrs.push_back(
          builder.getNamedAttr("gnn.differentiable", builder.getUnitAttr()));
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
    return add(arg);
  }

  /// A scalar constant of the element type (one op per value).
  int64_t constant(double value, const Where &where) {
    live();
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    auto [it, fresh] = constants.try_emplace(bits, -1);
    if (fresh)
      it->second = add(arith::ConstantOp::create(
          builder, at(where), builder.getFloatAttr(elementType, value)));
    return it->second;
  }

  /// Tensor `id` with its elements converted to `element` (arith.extf to
  /// a wider type, arith.truncf to a narrower one, rounding to nearest
  /// even; bf16 <-> f16 through f32): an elementwise linalg.generic into a
  /// new tensor. `id` itself where it has that type already.
  int64_t convert(int64_t id, const std::string &element, const Where &where) {
    RankedTensorType from = tensorOf(id, "convert");
    Type to = parseElement(element);
    Type have = from.getElementType();
    if (have == to)
      return id;
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < from.getRank(); ++d)
      if (from.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(builder, at(where), value(id),
                                              static_cast<int64_t>(d)));
    auto type = RankedTensorType::get(from.getShape(), to);
    Value init = tensor::EmptyOp::create(builder, at(where), type, sizes);
    int64_t rank = from.getRank();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, &ctx);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto op = linalg::GenericOp::create(
        builder, at(where), TypeRange{type}, ValueRange{value(id)},
        ValueRange{init}, ArrayRef<AffineMap>{identity, identity}, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value v = args[0];
          auto width = [](Type t) { return t.getIntOrFloatBitWidth(); };
          if (width(have) == width(to) && width(have) < 32)
            v = arith::ExtFOp::create(b, l, b.getF32Type(), v);
          if (width(v.getType()) < width(to))
            v = arith::ExtFOp::create(b, l, to, v);
          else if (v.getType() != to)
            v = arith::TruncFOp::create(b, l, to, v);
          linalg::YieldOp::create(b, l, v);
        });
    // An argument's conversion may come before the next argument (a
    // template converts each stored one where it declares it).
    bool body = hasBody;
    int64_t converted = add(op.getResult(0));
    if (isa<BlockArgument>(value(id)))
      hasBody = body;
    return converted;
  }

  /// The element type of tensor `id`: "f32", "f64", "bf16" or "f16".
  std::string element(int64_t id) const {
    Type t = tensorOf(id, "element").getElementType();
    return t.isF64() ? "f64" : t.isBF16() ? "bf16" : t.isF16() ? "f16" : "f32";
  }

  /// The size of dimension `axis` of tensor `id` (an index).
  int64_t dim(int64_t id, int64_t axis, const Where &where) {
    RankedTensorType t = tensorOf(id, "dim");
    if (axis < 0 || axis >= t.getRank())
      refuse("dim: axis " + std::to_string(axis) + " of a rank-" +
             std::to_string(t.getRank()) + " tensor");
    auto [it, fresh] = indices.try_emplace(axis, -1);
    if (fresh)
      it->second =
          add(arith::ConstantIndexOp::create(builder, at(where), axis));
    return add(tensor::DimOp::create(builder, at(where), value(id),
                                     value(it->second)));
  }

  /// An uninitialised tensor of `shape`; `sizes` are index values, one per
  /// dynamic dimension.
  int64_t empty(const std::vector<int64_t> &shape,
                const std::vector<int64_t> &sizes, const Where &where) {
    RankedTensorType t = tensorType(shape);
    if (sizes.size() != static_cast<size_t>(t.getNumDynamicDims()))
      refuse("empty: " + std::to_string(t.getNumDynamicDims()) +
             " dynamic dimension(s), " + std::to_string(sizes.size()) +
             " size(s) given");
    SmallVector<Value> dyn;
    for (int64_t s : sizes) {
      if (!value(s).getType().isIndex())
        refuse("empty: a size must be an index (from dim)");
      dyn.push_back(value(s));
    }
    return add(tensor::EmptyOp::create(builder, at(where), t, dyn));
  }

  /// `tensor` filled with the scalar `scalar`.
  int64_t fill(int64_t scalar, int64_t tensor, const Where &where) {
    scalarOf(scalar, "fill");
    tensorOf(tensor, "fill");
    return add(
        linalg::FillOp::create(builder, at(where), value(scalar), value(tensor))
            .getResult(0));
  }

  /// `out + lhs x rhs` (linalg.matmul; `out` is usually zeros), or with
  /// `transposeRhs` `out + lhs x rhsᵀ` (rhs [n, k], a PyTorch Linear's
  /// weight as it is stored: the matmul's indexing maps say so).
  int64_t matmul(int64_t lhs, int64_t rhs, int64_t out, bool transposeRhs,
                 const Where &where) {
    RankedTensorType a = tensorOf(lhs, "matmul"), b = tensorOf(rhs, "matmul"),
                     o = tensorOf(out, "matmul");
    if (a.getRank() != 2 || b.getRank() != 2 || o.getRank() != 2)
      refuse("matmul: expected matrices (rank 2)");
    int64_t k = b.getDimSize(transposeRhs ? 1 : 0),
            n = b.getDimSize(transposeRhs ? 0 : 1);
    auto differ = [](int64_t x, int64_t y) {
      return !ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y;
    };
    if (differ(a.getDimSize(1), k) || differ(o.getDimSize(1), n) ||
        differ(a.getDimSize(0), o.getDimSize(0)))
      refuse("matmul: expected lhs [m, k], rhs " +
             std::string(transposeRhs ? "[n, k]" : "[k, n]") +
             " and out [m, n], got " + shapeText(a) + ", " + shapeText(b) +
             " and " + shapeText(o));
    auto op = linalg::MatmulOp::create(builder, at(where), TypeRange{o},
                                       ValueRange{value(lhs), value(rhs)},
                                       ValueRange{value(out)});
    if (transposeRhs) {
      MLIRContext *ctx = builder.getContext();
      AffineExpr d0, d1, d2;
      bindDims(ctx, d0, d1, d2);
      op.setIndexingMapsAttr(builder.getAffineMapArrayAttr(
          {AffineMap::get(3, 0, {d0, d2}, ctx),
           AffineMap::get(3, 0, {d1, d2}, ctx),
           AffineMap::get(3, 0, {d0, d1}, ctx)}));
    }
    return add(op.getResult(0));
  }

  /// tensor.expand_shape of `input` into `shape` (-1: dynamic, given by the
  /// index values `sizes`, one per dynamic dimension), grouping result
  /// dimensions by `groups`.
  int64_t expand(int64_t input, const std::vector<std::vector<int64_t>> &groups,
                 const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &sizes, const Where &where) {
    RankedTensorType from = tensorOf(input, "expand");
    RankedTensorType to = tensorType(shape);
    SmallVector<ReassociationIndices> reassociation =
        checkGroups(groups, from.getRank(), to.getRank(), "expand");
    SmallVector<OpFoldResult> outputShape;
    size_t next = 0;
    for (int64_t d : to.getShape()) {
      if (!ShapedType::isDynamic(d)) {
        outputShape.push_back(builder.getIndexAttr(d));
        continue;
      }
      if (next >= sizes.size())
        refuse("expand: a size for every dynamic dimension");
      if (!value(sizes[next]).getType().isIndex())
        refuse("expand: a size must be an index (from dim)");
      outputShape.push_back(value(sizes[next++]));
    }
    if (next != sizes.size())
      refuse("expand: " + std::to_string(sizes.size()) + " sizes for " +
             std::to_string(next) + " dynamic dimension(s)");
    return add(tensor::ExpandShapeOp::create(
        builder, at(where), to, value(input), reassociation, outputShape));
  }

  /// tensor.collapse_shape of `input`, merging the dimensions of each group.
  int64_t collapse(int64_t input,
                   const std::vector<std::vector<int64_t>> &groups,
                   const Where &where) {
    RankedTensorType from = tensorOf(input, "collapse");
    SmallVector<ReassociationIndices> reassociation =
        checkGroups(groups, static_cast<int64_t>(groups.size()), from.getRank(),
                    "collapse");
    return add(tensor::CollapseShapeOp::create(builder, at(where), value(input),
                                               reassociation));
  }

  int64_t spmm(const std::string &reduce, int64_t input, int64_t weights,
               bool reversed, const Where &where) {
    auto kind = mlir::gnn::symbolizeReduceKind(reduce);
    if (!kind)
      refuse("spmm: expected the reduction sum, mean, max or min, got '" +
             reduce + "'");
    Value w = weights < 0 ? Value() : value(tensorId(weights, "spmm"));
    return add(mlir::gnn::SpmmOp::create(
                   builder, at(where), tensorOf(input, "spmm"),
                   /*winner=*/Type(), *kind, graph, value(input), w, reversed)
                   .getResult());
  }

  int64_t sddmm(const std::string &kindName, int64_t lhs, int64_t rhs,
                bool reversed, const Where &where) {
    auto kind = mlir::gnn::symbolizeSddmmKind(kindName);
    if (!kind)
      refuse("sddmm: expected dot, add, sub or mul, got '" + kindName + "'");
    RankedTensorType t = tensorOf(lhs, "sddmm");
    tensorOf(rhs, "sddmm");
    if (*kind == SddmmKind::dot) {
      if (t.getRank() < 2)
        refuse("sddmm dot: the rows need a feature dimension");
      t = RankedTensorType::get(t.getShape().drop_back(), t.getElementType());
    }
    return add(mlir::gnn::SddmmOp::create(builder, at(where), t, *kind, graph,
                                          value(lhs), value(rhs), reversed));
  }

  int64_t edgeSoftmax(int64_t input, bool reversed, const Where &where) {
    return add(mlir::gnn::EdgeSoftmaxOp::create(
                   builder, at(where),
                   TypeRange{tensorOf(input, "edge_softmax")}, graph,
                   value(input), reversed)
                   .getResult());
  }

  int64_t degree(bool reversed, const Where &where) {
    live();
    auto t = RankedTensorType::get({ShapedType::kDynamic}, elementType);
    return add(
        mlir::gnn::DegreeOp::create(builder, at(where), t, graph, reversed));
  }

  /// With `relations` > 0, the relation form: a nodes x relations x ...
  /// result (sum only).
  int64_t reduce(const std::string &kindName, int64_t input, bool reversed,
                 int64_t relations, const Where &where) {
    auto kind = mlir::gnn::symbolizeReduceKind(kindName);
    if (!kind)
      refuse("reduce: expected sum, mean, max or min, got '" + kindName + "'");
    RankedTensorType type = tensorOf(input, "reduce");
    if (relations < 0)
      refuse("reduce: relations must be positive, got " +
             std::to_string(relations));
    if (relations) {
      requireTyped("reduce");
      if (*kind != mlir::gnn::ReduceKind::sum)
        refuse("reduce: the relation form sums (kind 'sum'), got '" +
               kindName + "'");
      if (type.getRank() < 1)
        refuse("reduce: expected edge values with a row per edge");
      SmallVector<int64_t> shape(type.getShape());
      shape.insert(shape.begin() + 1, relations);
      type = RankedTensorType::get(shape, type.getElementType());
    }
    return add(mlir::gnn::ReduceOp::create(
                   builder, at(where), type, /*winner=*/Type(), *kind, graph,
                   value(input), reversed, relations > 0)
                   .getResult());
  }

  /// With `relation`, each edge reads the row of its relation of a
  /// nodes x R x ... input.
  int64_t gather(const std::string &endName, int64_t input, bool relation,
                 const Where &where) {
    auto end = mlir::gnn::symbolizeEdgeEnd(endName);
    if (!end)
      refuse("gather: expected the end src or dst, got '" + endName + "'");
    RankedTensorType type = tensorOf(input, "gather");
    if (relation) {
      requireTyped("gather");
      if (type.getRank() < 2 || type.isDynamicDim(1))
        refuse("gather: the relation form reads a tensor of shape [nodes, "
               "relations, ...] (relations static), got " +
               shapeText(type));
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + 1);
      type = RankedTensorType::get(shape, type.getElementType());
    }
    return add(mlir::gnn::GatherOp::create(builder, at(where), type, *end,
                                           graph, value(input), relation));
  }

  void requireTyped(const char *what) const {
    if (!cast<mlir::gnn::GraphType>(graph.getType()).getTyped())
      refuse(std::string(what) +
             ": the relation form needs a typed graph (Builder(typed=True))");
  }

  /// A linalg.generic over `numDims` loops; its results have the types of
  /// `outs`. The body's ops are built in order; `yields` name the values
  /// it yields, one per output.
  std::vector<int64_t>
  generic(int64_t numDims, const std::vector<std::vector<MapResult>> &maps,
          const std::vector<std::string> &iterators,
          const std::vector<int64_t> &ins, const std::vector<int64_t> &outs,
          const std::vector<BodyOp> &body, const std::vector<BodyRef> &yields,
          const Where &where) {
    live();
    size_t operands = ins.size() + outs.size();
    if (outs.empty())
      refuse("generic: at least one output");
    if (maps.size() != operands)
      refuse("generic: " + std::to_string(operands) + " operands, " +
             std::to_string(maps.size()) + " indexing maps");
    if (static_cast<int64_t>(iterators.size()) != numDims)
      refuse("generic: " + std::to_string(numDims) + " loops, " +
             std::to_string(iterators.size()) + " iterator types");
    if (yields.size() != outs.size())
      refuse("generic: " + std::to_string(outs.size()) + " outputs, " +
             std::to_string(yields.size()) + " yielded values");
    SmallVector<AffineMap> affine;
    for (const auto &m : maps)
      affine.push_back(affineMap(numDims, m));
    SmallVector<utils::IteratorType> iters;
    for (const std::string &i : iterators) {
      auto it = utils::symbolizeIteratorType(i);
      if (!it)
        refuse("generic: expected the iterator type parallel or reduction, "
               "got '" +
               i + "'");
      iters.push_back(*it);
    }
    SmallVector<Value> inValues, outValues;
    SmallVector<Type> resultTypes;
    for (int64_t i : ins)
      inValues.push_back(value(tensorId(i, "generic")));
    for (int64_t o : outs) {
      resultTypes.push_back(tensorOf(o, "generic"));
      outValues.push_back(value(o));
    }
    // Checked whole before the op is built: nothing may fail (throw)
    // inside MLIR's region builder.
    checkBody(body, yields, operands);
    auto op = linalg::GenericOp::create(
        builder, at(where), resultTypes, inValues, outValues, affine, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> results;
          auto ref = [&](const BodyRef &r) -> Value {
            return r.first == 0   ? args[r.second]
                   : r.first == 1 ? results[r.second]
                                  : values[r.second];
          };
          for (const auto &[name, refs, predicate] : body) {
            SmallVector<Value> a;
            for (const BodyRef &r : refs)
              a.push_back(ref(r));
            results.push_back(scalarOp(b, l, name, a, predicate));
          }
          SmallVector<Value> yielded;
          for (const BodyRef &r : yields)
            yielded.push_back(ref(r));
          linalg::YieldOp::create(b, l, yielded);
        });
    std::vector<int64_t> ids;
    for (Value r : op.getResults())
      ids.push_back(add(r));
    return ids;
  }

  /// Names value `id` (printed as `%name` by Module.text(names=True)): a
  /// NameLoc around its location.
  void name(int64_t id, const std::string &name) {
    if (name.empty())
      refuse("a name is not empty");
    Value v = value(id);
    auto named = [&](Location loc) {
      return NameLoc::get(StringAttr::get(&ctx, name), loc);
    };
    if (auto arg = dyn_cast<BlockArgument>(v))
      arg.setLoc(named(arg.getLoc()));
    else
      v.getDefiningOp()->setLoc(named(v.getDefiningOp()->getLoc()));
  }

  /// The shape of tensor `id` (-1 for a dynamic dimension); empty for a
  /// scalar or an index.
  std::vector<int64_t> shape(int64_t id) const {
    std::vector<int64_t> s;
    if (auto t = dyn_cast<RankedTensorType>(value(id).getType()))
      for (int64_t d : t.getShape())
        s.push_back(ShapedType::isDynamic(d) ? -1 : d);
    return s;
  }

  /// "tensor", "scalar" or "index".
  std::string kind(int64_t id) const {
    Type t = value(id).getType();
    return isa<RankedTensorType>(t) ? "tensor"
           : t.isIndex()            ? "index"
                                    : "scalar";
  }

  /// Returns `results`, verifies the function and hands the module over;
  /// the builder is spent.
  std::unique_ptr<Module> finish(const std::vector<int64_t> &results,
                                 const Where &where) {
    live();
    if (results.empty())
      refuse("a function returns at least one tensor");
    SmallVector<Value> returned;
    SmallVector<Type> types;
    for (int64_t r : results) {
      tensorOf(r, "return");
      returned.push_back(value(r));
      types.push_back(value(r).getType());
    }
    func::ReturnOp::create(builder, at(where), returned);
    Block &entry = function.getBody().front();
    function.setFunctionType(
        builder.getFunctionType(entry.getArgumentTypes(), types));
    SmallVector<Attribute> attrs{builder.getDictionaryAttr({})};
    attrs.append(argAttrs.begin(), argAttrs.end());
    function.setAllArgAttrs(attrs);
    {
      DiagnosticCollector diags(ctx);
      if (failed(mlir::verify(module->op())))
        diags.raise(function.getSymName().str() +
                    ": the built function does not verify");
    }
    spent = true;
    return std::move(module);
  }

private:
  Type parseElement(const std::string &element) {
    if (element == "f32")
      return builder.getF32Type();
    if (element == "f64")
      return builder.getF64Type();
    if (element == "bf16")
      return builder.getBF16Type();
    if (element == "f16")
      return builder.getF16Type();
    refuse("expected the element type 'f32', 'f64', 'bf16' or 'f16', got '" +
           element + "'");
  }

  void live() const {
    if (spent)
      refuse("this function was finished already; start a new one");
  }

  Location at(const Where &where) {
    return FileLineColLoc::get(&ctx, where.first, where.second, 1);
  }

  int64_t add(Value v) {
    values.push_back(v);
    if (!isa<BlockArgument>(v))
      hasBody = true;
    return static_cast<int64_t>(values.size()) - 1;
  }

  Value value(int64_t id) const {
    live();
    if (id < 0 || id >= static_cast<int64_t>(values.size()))
      refuse("no value #" + std::to_string(id) + " in this function");
    return values[id];
  }

  RankedTensorType tensorOf(int64_t id, const char *what) const {
    auto t = dyn_cast<RankedTensorType>(value(id).getType());
    if (!t)
      refuse(std::string(what) + ": expected a tensor, got a " + kind(id));
    return t;
  }
  int64_t tensorId(int64_t id, const char *what) const {
    tensorOf(id, what);
    return id;
  }
  int64_t scalarOf(int64_t id, const char *what) const {
    if (value(id).getType() != elementType)
      refuse(std::string(what) +
             ": expected a scalar of the element type, "
             "got a " +
             kind(id));
    return id;
  }

  RankedTensorType tensorType(const std::vector<int64_t> &shape) {
    SmallVector<int64_t> dims;
    for (int64_t d : shape) {
      if (d < -1)
        refuse("a dimension is a size >= 0, or -1 (dynamic), got " +
               std::to_string(d));
      dims.push_back(d == -1 ? ShapedType::kDynamic : d);
    }
    return RankedTensorType::get(dims, elementType);
  }

  /// `groups` as reassociation indices: consecutive, covering the `wide`
  /// dimensions once, one group per dimension of the `narrow` side.
  SmallVector<ReassociationIndices>
  checkGroups(const std::vector<std::vector<int64_t>> &groups, int64_t narrow,
              int64_t wide, const char *what) const {
    if (static_cast<int64_t>(groups.size()) != narrow)
      refuse(std::string(what) + ": " + std::to_string(groups.size()) +
             " groups for " + std::to_string(narrow) + " dimensions");
    SmallVector<ReassociationIndices> out;
    int64_t next = 0;
    for (const auto &g : groups) {
      if (g.empty())
        refuse(std::string(what) + ": an empty group");
      ReassociationIndices r;
      for (int64_t d : g) {
        if (d != next)
          refuse(std::string(what) + ": groups list the dimensions 0.." +
                 std::to_string(wide - 1) + " in order, got " +
                 std::to_string(d) + " where " + std::to_string(next) +
                 " was expected");
        r.push_back(next++);
      }
      out.push_back(r);
    }
    if (next != wide)
      refuse(std::string(what) + ": the groups cover " + std::to_string(next) +
             " of " + std::to_string(wide) + " dimensions");
    return out;
  }

  AffineMap affineMap(int64_t numDims, const std::vector<MapResult> &m) {
    SmallVector<AffineExpr> exprs;
    for (auto [isDim, v] : m) {
      if (isDim && (v < 0 || v >= numDims))
        refuse("generic: an indexing map uses dimension " + std::to_string(v) +
               " of " + std::to_string(numDims));
      exprs.push_back(isDim ? builder.getAffineDimExpr(v)
                            : builder.getAffineConstantExpr(v));
    }
    return AffineMap::get(numDims, 0, exprs, &ctx);
  }

  /// Builds one body op from its operands (and arith.cmpf's predicate).
  using BuildScalar = Value (*)(OpBuilder &, Location, ArrayRef<Value>,
                                const std::string &);
  template <typename Op>
  static Value unary(OpBuilder &b, Location l, ArrayRef<Value> a,
                     const std::string &) {
    return Op::create(b, l, a[0]);
  }
  template <typename Op>
  static Value binary(OpBuilder &b, Location l, ArrayRef<Value> a,
                      const std::string &) {
    return Op::create(b, l, a[0], a[1]);
  }
  static Value compare(OpBuilder &b, Location l, ArrayRef<Value> a,
                       const std::string &predicate) {
    return arith::CmpFOp::create(
        b, l, *arith::symbolizeCmpFPredicate(predicate), a[0], a[1]);
  }
  static Value choose(OpBuilder &b, Location l, ArrayRef<Value> a,
                      const std::string &) {
    return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
  }

  /// What a body op takes and gives, and how it is built.
  struct ScalarOpInfo {
    unsigned arity;
    bool boolean; ///< its result is a comparison's i1
    BuildScalar build;
  };
  static const ScalarOpInfo *scalarOpInfo(const std::string &name) {
    static const std::map<std::string, ScalarOpInfo> table = {
        {"arith.negf", {1, false, unary<arith::NegFOp>}},
        {"math.sqrt", {1, false, unary<math::SqrtOp>}},
        {"math.rsqrt", {1, false, unary<math::RsqrtOp>}},
        {"math.exp", {1, false, unary<math::ExpOp>}},
        {"math.log", {1, false, unary<math::LogOp>}},
        {"math.tanh", {1, false, unary<math::TanhOp>}},
        {"math.absf", {1, false, unary<math::AbsFOp>}},
        {"arith.addf", {2, false, binary<arith::AddFOp>}},
        {"arith.subf", {2, false, binary<arith::SubFOp>}},
        {"arith.mulf", {2, false, binary<arith::MulFOp>}},
        {"arith.divf", {2, false, binary<arith::DivFOp>}},
        {"arith.maximumf", {2, false, binary<arith::MaximumFOp>}},
        {"arith.minimumf", {2, false, binary<arith::MinimumFOp>}},
        {"arith.cmpf", {2, true, compare}},
        {"arith.select", {3, false, choose}},
    };
    auto it = table.find(name);
    return it == table.end() ? nullptr : &it->second;
  }

  /// Refuses a body that refers to nothing, names an unknown op, or mixes
  /// comparisons and numbers; `numArgs` block arguments.
  void checkBody(const std::vector<BodyOp> &body,
                 const std::vector<BodyRef> &yields, size_t numArgs) const {
    std::vector<bool> boolean;
    auto isBool = [&](const BodyRef &r, size_t j) {
      auto [kind, index] = r;
      if (kind == 0 && index >= 0 && static_cast<size_t>(index) < numArgs)
        return false;
      if (kind == 1 && index >= 0 && static_cast<size_t>(index) < j)
        return static_cast<bool>(boolean[index]);
      if (kind == 2) {
        scalarOf(index, "generic: a captured value");
        return false;
      }
      refuse("generic: a body operand refers to nothing (" +
             std::to_string(kind) + ", " + std::to_string(index) + ")");
    };
    for (size_t j = 0; j < body.size(); ++j) {
      const auto &[name, refs, predicate] = body[j];
      const ScalarOpInfo *info = scalarOpInfo(name);
      if (!info)
        refuse("generic: no scalar op '" + name + "'");
      if (refs.size() != info->arity)
        refuse("generic: " + name + " takes " + std::to_string(info->arity) +
               " operand(s), got " + std::to_string(refs.size()));
      for (size_t k = 0; k < refs.size(); ++k) {
        bool wantBool = name == "arith.select" && k == 0;
        if (isBool(refs[k], j) != wantBool)
          refuse("generic: " + name + " operand #" + std::to_string(k) +
                 (wantBool ? " must be a comparison"
                           : " must be a number, not a comparison"));
      }
      if (name == "arith.cmpf" && !arith::symbolizeCmpFPredicate(predicate))
        refuse("generic: no comparison '" + predicate + "'");
      boolean.push_back(info->boolean);
    }
    for (const BodyRef &r : yields)
      if (isBool(r, body.size()))
        refuse("generic: a body yields a comparison, not a number");
  }

  /// One scalar op of a generic's body (checked by checkBody).
  static Value scalarOp(OpBuilder &b, Location l, const std::string &name,
                        ArrayRef<Value> a, const std::string &predicate) {
    return scalarOpInfo(name)->build(b, l, a, predicate);
  }

  std::unique_ptr<Module> module;
  MLIRContext &ctx;
  OpBuilder builder;
  Type elementType;
  func::FuncOp function;
  Value graph;
  std::vector<Value> values;
  SmallVector<Attribute> argAttrs;
  std::map<uint64_t, int64_t> constants;
  std::map<int64_t, int64_t> indices;
  bool hasBody = false;
  bool spent = false;
};

} // namespace

void bindIRBuilder(nb::module_ &m) {
  nb::class_<FunctionBuilder>(m, "FunctionBuilder")
      .def(nb::init<const std::string &, const std::string &, bool, bool>(),
           nb::arg("name"), nb::arg("element"), nb::arg("bipartite") = false,
           nb::arg("typed") = false)
      .def("argument", &FunctionBuilder::argument, nb::arg("shape"),
           nb::arg("domain"), nb::arg("differentiable"), nb::arg("element"),
           nb::arg("where"))
      .def("convert", &FunctionBuilder::convert, nb::arg("value"),
           nb::arg("element"), nb::arg("where"))
      .def("element", &FunctionBuilder::element, nb::arg("value"))
      .def("constant", &FunctionBuilder::constant, nb::arg("value"),
           nb::arg("where"))
      .def("dim", &FunctionBuilder::dim, nb::arg("value"), nb::arg("axis"),
           nb::arg("where"))
      .def("empty", &FunctionBuilder::empty, nb::arg("shape"), nb::arg("sizes"),
           nb::arg("where"))
      .def("fill", &FunctionBuilder::fill, nb::arg("scalar"), nb::arg("tensor"),
           nb::arg("where"))
      .def("matmul", &FunctionBuilder::matmul, nb::arg("lhs"), nb::arg("rhs"),
           nb::arg("out"), nb::arg("transpose_rhs"), nb::arg("where"))
      .def("expand", &FunctionBuilder::expand, nb::arg("input"),
           nb::arg("groups"), nb::arg("shape"), nb::arg("sizes"),
           nb::arg("where"))
      .def("collapse", &FunctionBuilder::collapse, nb::arg("input"),
           nb::arg("groups"), nb::arg("where"))
      .def("spmm", &FunctionBuilder::spmm, nb::arg("reduce"), nb::arg("input"),
           nb::arg("weights"), nb::arg("reversed"), nb::arg("where"))
      .def("sddmm", &FunctionBuilder::sddmm, nb::arg("kind"), nb::arg("lhs"),
           nb::arg("rhs"), nb::arg("reversed"), nb::arg("where"))
      .def("edge_softmax", &FunctionBuilder::edgeSoftmax, nb::arg("input"),
           nb::arg("reversed"), nb::arg("where"))
      .def("degree", &FunctionBuilder::degree, nb::arg("reversed"),
           nb::arg("where"))
      .def("reduce", &FunctionBuilder::reduce, nb::arg("kind"),
           nb::arg("input"), nb::arg("reversed"), nb::arg("relations"),
           nb::arg("where"))
      .def("gather", &FunctionBuilder::gather, nb::arg("end"), nb::arg("input"),
           nb::arg("relation"), nb::arg("where"))
      .def("generic", &FunctionBuilder::generic, nb::arg("num_dims"),
           nb::arg("maps"), nb::arg("iterators"), nb::arg("ins"),
           nb::arg("outs"), nb::arg("body"), nb::arg("yields"),
           nb::arg("where"))
      .def("name", &FunctionBuilder::name, nb::arg("value"), nb::arg("name"))
      .def("shape", &FunctionBuilder::shape, nb::arg("value"))
      .def("kind", &FunctionBuilder::kind, nb::arg("value"))
      .def("finish", &FunctionBuilder::finish, nb::arg("results"),
           nb::arg("where"));
}

} // namespace gnnc_py
