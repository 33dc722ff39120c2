//===- TensorBuilders.h - building gnn and linalg tensor ops ----*- C++ -*-===//
//
// Part of gnnc. Helpers that build the tensor ops of the graph-level
// rewrites at one location: elementwise linalg.generics in a result's
// arithmetic type (rounded on store for bf16/f16 results), gathers,
// reduces and degrees at one end of a graph's edges. The VJP rules
// (VJPRules.cpp) and gnn-pull-extremum-grads build with them.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_DIALECT_GNN_TRANSFORMS_TENSORBUILDERS_H
#define GNN_LIB_DIALECT_GNN_TRANSFORMS_TENSORBUILDERS_H

#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace gnn {
namespace builders {

/// The map of `dims` loops to their first `results` (a scalar operand's
/// map for 0: AffineMap::getMajorSubMap(0) is a null map, and a generic
/// built with it crashed; a 0-d parameter used twice summed its gradients
/// through one).
inline AffineMap leadingDims(unsigned dims, unsigned results, MLIRContext *ctx) {
  if (results == 0)
    return AffineMap::get(dims, 0, ctx);
  return AffineMap::getMultiDimIdentityMap(dims, ctx).getMajorSubMap(results);
}

/// Tensor-building helpers at one location.
struct TB {
  OpBuilder &b;
  Location loc;

  RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  Type elementOf(Value v) { return typeOf(v).getElementType(); }

  /// tensor.empty shaped like `like` (dynamic sizes from tensor.dim).
  Value emptyLike(Value like, Type element = {}) {
    RankedTensorType t = typeOf(like);
    SmallVector<Value> dyn;
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (t.isDynamicDim(i))
        dyn.push_back(tensor::DimOp::create(b, loc, like, i));
    return tensor::EmptyOp::create(b, loc, t.getShape(),
                                   element ? element : t.getElementType(), dyn);
  }
  Value constant(Type t, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
  }
  /// Zeros shaped like `like`.
  Value zerosLike(Value like) {
    Value zero = constant(elementOf(like), 0.0);
    return linalg::FillOp::create(b, loc, zero, emptyLike(like)).getResult(0);
  }

  /// An elementwise linalg.generic over `like`'s shape, of `like`'s type or
  /// of element type `element`: each input has `like`'s rank (identity map)
  /// or fewer dimensions (a leading prefix, broadcast over the rest); `body`
  /// gets the inputs' scalars converted to the result's arithmetic type (an
  /// f32 log-sum-exp or winner code meets bf16 values in f32, not rounded to
  /// bf16) and its value is rounded to the result's element type.
  Value map(Value like, ArrayRef<Value> ins,
            function_ref<Value(OpBuilder &, Location, ValueRange)> body,
            Type element = {}) {
    RankedTensorType resultType = typeOf(like);
    if (element)
      resultType = resultType.clone(element);
    Type arith = arithmeticType(resultType.getElementType());
    int64_t rank = resultType.getRank();
    SmallVector<AffineMap> maps;
    for (Value in : ins)
      maps.push_back(leadingDims(rank, typeOf(in).getRank(), b.getContext()));
    maps.push_back(b.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{resultType}, ins,
        ValueRange{emptyLike(like, resultType.getElementType())}, maps, iters,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          SmallVector<Value> scalars;
          for (Value a : args.drop_back())
            scalars.push_back(convertScalar(nb, nl, a, arith));
          Value y = body(nb, nl, scalars);
          linalg::YieldOp::create(
              nb, nl, convertScalar(nb, nl, y, resultType.getElementType()));
        });
    if (isStorageFloatType(resultType.getElementType()))
      generic->setAttr(kRoundsOnStoreAttrName, b.getUnitAttr());
    return generic.getResult(0);
  }
  /// `v` as a float of type `to` (arith.extf or arith.truncf), or `v`.
  static Value convertScalar(OpBuilder &nb, Location nl, Value v, Type to) {
    Type from = v.getType();
    if (from == to || !isa<FloatType>(from))
      return v;
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(nb, nl, to, v);
    return arith::TruncFOp::create(nb, nl, to, v);
  }
  /// `x` with its elements converted to `element` (rounded if narrower).
  Value convert(Value x, Type element) {
    if (elementOf(x) == element)
      return x;
    return map(
        x, {x}, [](OpBuilder &, Location, ValueRange a) { return a[0]; },
        element);
  }
  Value add(Value x, Value y) {
    return map(x, {x, y}, [](OpBuilder &nb, Location nl, ValueRange a) {
      return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
    });
  }
  /// x * y (y broadcast over x's trailing dimensions), of `element` if
  /// given, else of x's element type.
  Value mul(Value x, Value y, Type element = {}) {
    return map(
        x, {x, y},
        [](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::MulFOp::create(nb, nl, a[0], a[1]).getResult();
        },
        element);
  }
  Value neg(Value x) {
    return map(x, {x}, [](OpBuilder &nb, Location nl, ValueRange a) {
      return arith::NegFOp::create(nb, nl, a[0]).getResult();
    });
  }
  /// x / d with d broadcast over x's trailing dimensions, 0 where d = 0.
  Value divOrZero(Value x, Value d) {
    return map(x, {x, d}, [](OpBuilder &nb, Location nl, ValueRange a) {
      Value zero = arith::ConstantOp::create(
          nb, nl, nb.getFloatAttr(a[0].getType(), 0.0));
      Value q = arith::DivFOp::create(nb, nl, a[0], a[1]);
      Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                         a[1], zero);
      return arith::SelectOp::create(nb, nl, none, zero, q).getResult();
    });
  }
  /// The sum of `x` over its last dimension, as a tensor of `type` (x's
  /// shape without its last dimension).
  Value sumLast(Value x, Type type) {
    auto out = cast<RankedTensorType>(type);
    int64_t rank = typeOf(x).getRank();
    SmallVector<Value> dyn;
    for (int64_t i = 0; i < out.getRank(); ++i)
      if (out.isDynamicDim(i))
        dyn.push_back(tensor::DimOp::create(b, loc, x, i));
    Value init =
        linalg::FillOp::create(
            b, loc, constant(out.getElementType(), 0.0),
            tensor::EmptyOp::create(b, loc, out.getShape(),
                                    out.getElementType(), dyn)
                .getResult())
            .getResult(0);
    AffineMap id = b.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> iters(rank - 1,
                                           utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, TypeRange{out}, ValueRange{x}, ValueRange{init},
               ArrayRef<AffineMap>{id, leadingDims(rank, rank - 1, b.getContext())},
               iters,
               [](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(
                     nb, nl,
                     ValueRange{arith::AddFOp::create(nb, nl, a[1], a[0])});
               })
        .getResult(0);
  }
  /// A tensor like `x` with `rows` rows (dynamic) of x's trailing shape.
  RankedTensorType withRows(Value x, int64_t rows = ShapedType::kDynamic) {
    SmallVector<int64_t> shape(typeOf(x).getShape());
    shape[0] = rows;
    return RankedTensorType::get(shape, elementOf(x));
  }
};

/// The graph ops seen from one end of the edges.
struct GraphTB : TB {
  Value graph;

  /// x[end(e)] for every edge; with `relation`, x[end(e), type(e)] (x has
  /// a row per node and relation: the result drops dimension 1).
  Value gatherAt(EdgeEnd end, Value x, bool relation = false) {
    RankedTensorType type = withRows(x);
    if (relation) {
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + 1);
      type = RankedTensorType::get(shape, type.getElementType());
    }
    return GatherOp::create(b, loc, type, end, graph, x, relation);
  }
  /// Sums edge values onto the nodes at `end`, as `like` (a node tensor);
  /// with `relation`, onto row (node, type(e)) of a nodes x R x ... result.
  Value reduceAt(EdgeEnd end, Value edgeValues, Type resultType,
                 bool relation = false) {
    return ReduceOp::create(b, loc, resultType, /*winner=*/Type(),
                            ReduceKind::sum, graph, edgeValues,
                            /*reversed=*/end == EdgeEnd::src, relation)
        .getResult();
  }
  /// The number of edges at `end` of each node.
  Value degreeAt(EdgeEnd end, Type element) {
    auto t = RankedTensorType::get({ShapedType::kDynamic}, element);
    return DegreeOp::create(b, loc, t, graph, /*reversed=*/end == EdgeEnd::src);
  }
};

inline EdgeEnd other(EdgeEnd end) {
  return end == EdgeEnd::src ? EdgeEnd::dst : EdgeEnd::src;
}

/// Where an op with `reversed` aggregates: the destination, or the source.
inline EdgeEnd aggregationEnd(bool reversed) {
  return reversed ? EdgeEnd::src : EdgeEnd::dst;
}

} // namespace builders
} // namespace gnn
} // namespace mlir

#endif // GNN_LIB_DIALECT_GNN_TRANSFORMS_TENSORBUILDERS_H
