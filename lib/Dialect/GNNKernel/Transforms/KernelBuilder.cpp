//===- KernelBuilder.cpp - building one gnnk.kernel from a group ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;
using namespace mlir::gnnk;

FailureOr<AffineExpr> mlir::gnnk::rowsExpr(Value value) {
  FailureOr<AffineExpr> rows = rowsOf(value);
  if (succeeded(rows))
    return rows;
  Operation *def = value.getDefiningOp();
  InFlightDiagnostic diag =
      def ? def->emitOpError() : emitError(value.getLoc());
  diag << "produces a tensor whose leading dimension cannot be told to count "
          "nodes or edges";
  return failure();
}

FailureOr<int64_t> mlir::gnnk::rowElements(Value value, Operation *where) {
  auto t = dyn_cast<RankedTensorType>(value.getType());
  if (t && !mlir::gnn::isGNNFloatType(t.getElementType()))
    return where->emitOpError() << "uses " << t
                                << "; the CUDA backend supports only f16, "
                                   "bf16, f32 and f64 tensors";
  return rowElementsOf(value, where);
}

FloatType mlir::gnnk::groupArithmeticType(gnn::KernelGroupOp group) {
  FloatType found;
  auto see = [&](Type t) {
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      if (auto f = dyn_cast<FloatType>(tensor.getElementType()))
        if (!found)
          found = cast<FloatType>(mlir::gnn::arithmeticType(f));
  };
  group.getBody().walk([&](Operation *op) {
    for (Type t :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      see(t);
  });
  for (Type t : group->getResultTypes())
    see(t);
  return found ? found : Float32Type::get(group.getContext());
}

AffineMap mlir::gnnk::sizeMap(AffineExpr e) {
  return AffineMap::get(0, kNumSizeSymbols, e);
}

KernelBuilder::KernelBuilder(gnn::KernelGroupOp group, StringRef name,
                             int64_t block, int indexBits)
    : group(group), b(group.getContext()), loc(group.getLoc()),
      indexBits(indexBits), ft(groupArithmeticType(group)),
      top(group.getContext()) {
  auto func = group->getParentOfType<func::FuncOp>();
  OpBuilder mb(func);
  MLIRContext *ctx = group.getContext();
  kernel = KernelOp::create(
      mb, loc, StringAttr::get(ctx, name),
      TypeAttr::get(FunctionType::get(ctx, {}, {})), ArrayAttr(), ArrayAttr(),
      mb.getI64IntegerAttr(block),
      AffineMapAttr::get(sizeMap(getAffineConstantExpr(1, ctx))),
      /*min_blocks=*/IntegerAttr());
  entry = new Block();
  kernel.getBody().push_back(entry);
  // Sizes and hoisted values go before `marker`, the body after it.
  OpBuilder eb = OpBuilder::atBlockEnd(entry);
  marker = arith::ConstantIndexOp::create(eb, loc, 0);
  top.setInsertionPoint(marker);
  b.setInsertionPointAfter(marker);
}

BlockArgument KernelBuilder::addParam(Type type, NamedAttribute binding) {
  BlockArgument arg = entry->addArgument(type, loc);
  NamedAttrList attrs;
  attrs.push_back(binding);
  argAttrs.push_back(attrs);
  return arg;
}

Value KernelBuilder::operand(Value tensor) {
  auto it = operandParams.find(tensor);
  if (it != operandParams.end())
    return it->second;
  auto type = cast<RankedTensorType>(tensor.getType());
  Value p = addParam(
      MemRefType::get({ShapedType::kDynamic}, type.getElementType()),
      b.getNamedAttr(KernelOp::kOperand,
                     b.getI64IntegerAttr(launchOperands.size())));
  launchOperands.push_back(tensor);
  operandParams[tensor] = p;
  return p;
}

Value KernelBuilder::result(unsigned i) {
  auto it = resultParams.find(i);
  if (it != resultParams.end())
    return it->second;
  auto type = cast<RankedTensorType>(
      resultTypes.empty() ? group->getResult(i).getType() : resultTypes[i]);
  Value p = addParam(
      MemRefType::get({ShapedType::kDynamic}, type.getElementType()),
      b.getNamedAttr(KernelOp::kResult, b.getI64IntegerAttr(i)));
  resultParams[i] = p;
  return p;
}

Value KernelBuilder::accumulatedResult(unsigned i) {
  auto p = cast<BlockArgument>(result(i));
  argAttrs[p.getArgNumber()].set(KernelOp::kAccumulate, b.getUnitAttr());
  return p;
}

Value KernelBuilder::graph(StringRef array) {
  auto it = graphParams.find(array);
  if (it != graphParams.end())
    return it->second;
  Value p = addParam(MemRefType::get({ShapedType::kDynamic},
                                     b.getIntegerType(indexBits)),
                     b.getNamedAttr(KernelOp::kGraph, b.getStringAttr(array)));
  graphParams[array] = p;
  return p;
}

Value KernelBuilder::size(StringRef which) {
  auto it = sizeParams.find(which);
  if (it != sizeParams.end())
    return it->second;
  Value p = addParam(b.getI64Type(),
                     b.getNamedAttr(KernelOp::kSize, b.getStringAttr(which)));
  Value v = arith::IndexCastOp::create(top, loc, b.getIndexType(), p);
  sizeParams[which] = v;
  return v;
}

Value KernelBuilder::sizeValue(AffineExpr e) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(marker);
  std::function<Value(AffineExpr)> eval = [&](AffineExpr x) -> Value {
    if (auto c = dyn_cast<AffineConstantExpr>(x))
      return idx(c.getValue());
    if (auto s = dyn_cast<AffineSymbolExpr>(x))
      return size(sizeSymbolName(s.getPosition()));
    auto bin = cast<AffineBinaryOpExpr>(x);
    Value l = eval(bin.getLHS()), r = eval(bin.getRHS());
    switch (bin.getKind()) {
    case AffineExprKind::Add: return add(l, r);
    case AffineExprKind::Mul: return mul(l, r);
    case AffineExprKind::CeilDiv:
      return arith::CeilDivSIOp::create(b, loc, l, r);
    case AffineExprKind::FloorDiv:
      return arith::FloorDivSIOp::create(b, loc, l, r);
    default: return arith::RemSIOp::create(b, loc, l, r);
    }
  };
  return eval(e);
}

Value KernelBuilder::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value KernelBuilder::fp(double v) { return fp(ft, v); }
Value KernelBuilder::fp(Type type, double v) {
  Type arith = mlir::gnn::arithmeticType(type);
  if (arith == type)
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  // A bf16 or f16 constant: its value rounded to the storage type, held in
  // the arithmetic type.
  APFloat value(v);
  bool lost = false;
  value.convert(cast<FloatType>(type).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
  value.convert(cast<FloatType>(arith).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
  return arith::ConstantOp::create(b, loc, FloatAttr::get(arith, value));
}
Value KernelBuilder::castFloat(Value v, Type type) {
  unsigned from = v.getType().getIntOrFloatBitWidth(),
           to = type.getIntOrFloatBitWidth();
  if (from == to)
    return v;
  if (from < to)
    return arith::ExtFOp::create(b, loc, type, v);
  return arith::TruncFOp::create(b, loc, type, v);
}
Value KernelBuilder::f64(double v) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
}
Value KernelBuilder::add(Value a, Value c) {
  return arith::AddIOp::create(b, loc, a, c);
}
Value KernelBuilder::sub(Value a, Value c) {
  return arith::SubIOp::create(b, loc, a, c);
}
Value KernelBuilder::mul(Value a, Value c) {
  return arith::MulIOp::create(b, loc, a, c);
}
Value KernelBuilder::div(Value a, int64_t c) {
  return c == 1 ? a : arith::DivUIOp::create(b, loc, a, idx(c)).getResult();
}
Value KernelBuilder::rem(Value a, int64_t c) {
  return c == 1 ? idx(0) : arith::RemUIOp::create(b, loc, a, idx(c)).getResult();
}
Value KernelBuilder::lt(Value a, Value c) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a, c);
}

SmallVector<Value> KernelBuilder::rowIndices(Value first, Value k,
                                             RankedTensorType type) {
  SmallVector<Value> idx(type.getRank());
  idx[0] = first;
  int64_t stride = 1;
  for (int64_t d = type.getRank() - 1; d >= 1; --d) {
    idx[d] = rem(div(k, stride), type.getDimSize(d));
    stride *= type.getDimSize(d);
  }
  return idx;
}

Value KernelBuilder::loadIndex(Value array, Value pos) {
  Value v = load(array, pos)[0];
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

SmallVector<Value> KernelBuilder::load(Value buffer, Value index, int n) {
  // bf16 and f16 widen to f32.
  Type element = mlir::gnn::arithmeticType(
      cast<MemRefType>(buffer.getType()).getElementType());
  SmallVector<Type> types(n, element);
  auto op = LoadOp::create(b, loc, types, buffer, index);
  return SmallVector<Value>(op.getResults());
}

void KernelBuilder::store(ValueRange values, Value buffer, Value index) {
  StoreOp::create(b, loc, values, buffer, index);
}

std::optional<double> KernelBuilder::fillConstant(Value tensor) {
  auto fill = tensor.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return std::nullopt;
  auto c = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
  if (!f)
    return std::nullopt;
  return f.getValueAsDouble();
}

FailureOr<SmallVector<Value>>
KernelBuilder::inlineBody(linalg::GenericOp op, ValueRange args,
                          ValueRange loopIdx) {
  Block &block = op.getRegion().front();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(block.getArguments(), args))
    map.map(arg, v);
  SmallVector<Value> yields;
  // Values from outside the body: only constants, cloned in (CSE hoists a
  // body's constants out of it, a yielded one included).
  auto mapOutside = [&](Operation &inner, Value operand) -> LogicalResult {
    if (map.contains(operand) || operand.getParentBlock() == &block)
      return success();
    auto c = operand.getDefiningOp<arith::ConstantOp>();
    if (!c)
      return inner.emitOpError()
             << "uses a value defined outside its linalg body that is not "
                "a constant; the CUDA backend supports only constants there";
    map.map(operand, cloneConstant(c));
    return success();
  };
  for (Operation &inner : block) {
    if (auto yield = dyn_cast<linalg::YieldOp>(inner)) {
      for (Value v : yield.getValues()) {
        if (failed(mapOutside(inner, v)))
          return failure();
        yields.push_back(map.lookupOrDefault(v));
      }
      break;
    }
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      if (index.getDim() >= loopIdx.size())
        return index.emitOpError("reads a loop index the kernel does not "
                                 "have");
      map.map(index.getResult(), loopIdx[index.getDim()]);
      continue;
    }
    for (Value operand : inner.getOperands())
      if (failed(mapOutside(inner, operand)))
        return failure();
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return inner.emitOpError("is not supported in a kernel body (only "
                               "arith and math ops)");
    cloneInArithmeticType(inner, map);
  }
  return yields;
}

Value KernelBuilder::cloneConstant(arith::ConstantOp c) {
  // Only half-precision constants change type; the others are copied bit
  // for bit (a NaN keeps its payload).
  if (auto f = dyn_cast<FloatAttr>(c.getValue());
      f && mlir::gnn::isStorageFloatType(f.getType()))
    return fp(f.getType(), f.getValueAsDouble());
  return b.clone(*c)->getResult(0);
}

/// Whether `trunc` only converts what the body of a generic marked
/// gnn.rounds_on_store makes to the result's storage type: its value is
/// yielded, or is the term of the `out + term` the body yields (a sum). That
/// rounding is the result's own, done where the result is stored; a kernel
/// that consumes the result in registers keeps it in f32 (Semantics.md).
static bool convertsTheResult(arith::TruncFOp trunc) {
  Block *block = trunc->getBlock();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(block->getParentOp());
  if (!generic || !generic->hasAttr(mlir::gnn::kRoundsOnStoreAttrName))
    return false;
  auto isOut = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == block &&
           arg.getArgNumber() >= generic.getNumDpsInputs();
  };
  return llvm::all_of(trunc->getUsers(), [&](Operation *user) {
    if (isa<linalg::YieldOp>(user))
      return true;
    return isa<arith::AddFOp>(user) && user->hasOneUse() &&
           isa<linalg::YieldOp>(*user->user_begin()) &&
           llvm::any_of(user->getOperands(), isOut);
  });
}

void KernelBuilder::cloneInArithmeticType(Operation &inner, IRMapping &map) {
  auto promoted = [](Type t) { return mlir::gnn::arithmeticType(t); };
  bool half =
      llvm::any_of(inner.getResultTypes(), mlir::gnn::isStorageFloatType) ||
      llvm::any_of(inner.getOperandTypes(), mlir::gnn::isStorageFloatType);
  if (!half) {
    b.clone(inner, map);
    return;
  }
  // bf16/f16 values are f32 in a kernel: a widening is a no-op, a rounding
  // rounds to the storage type and widens back (the value is that of the
  // bf16 the linalg body computes) unless it only converts the body's
  // result, a constant is held in f32.
  if (auto ext = dyn_cast<arith::ExtFOp>(inner)) {
    Value in = map.lookup(ext.getIn());
    Type to = promoted(ext.getType());
    map.map(ext.getResult(), castFloat(in, to));
    return;
  }
  if (auto trunc = dyn_cast<arith::TruncFOp>(inner)) {
    Value in = map.lookup(trunc.getIn());
    Type to = trunc.getType();
    if (convertsTheResult(trunc)) {
      map.map(trunc.getResult(), castFloat(in, promoted(to)));
      return;
    }
    Value rounded = arith::TruncFOp::create(b, loc, to, in);
    map.map(trunc.getResult(),
            arith::ExtFOp::create(b, loc, promoted(to), rounded));
    return;
  }
  if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
    if (auto f = dyn_cast<FloatAttr>(c.getValue())) {
      map.map(c.getResult(), fp(f.getType(), f.getValueAsDouble()));
      return;
    }
  }
  Operation *clone = b.clone(inner, map);
  for (OpResult r : clone->getResults())
    r.setType(promoted(r.getType()));
}

SmallVector<Value> KernelBuilder::inlineRegion(Region &region,
                                               ValueRange args) {
  Block &block = region.front();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(block.getArguments(), args))
    map.map(arg, v);
  for (Operation &inner : block.without_terminator())
    b.clone(inner, map);
  SmallVector<Value> out;
  for (Value v : block.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

FailureOr<Value> KernelBuilder::access(Value tensor, AffineMap map,
                                       ValueRange loopIdx, Operation *where) {
  if (!isa<RankedTensorType>(tensor.getType())) {
    if (auto c = tensor.getDefiningOp<arith::ConstantOp>())
      return cloneConstant(c);
    return where->emitOpError("has a scalar operand that is not a constant");
  }
  if (std::optional<double> c = fillConstant(tensor))
    return fp(cast<RankedTensorType>(tensor.getType()).getElementType(), *c);
  if (Operation *def = tensor.getDefiningOp())
    if (groupElement && group->isAncestor(def))
      return groupElement(tensor, map, loopIdx, where);
  auto t = cast<RankedTensorType>(tensor.getType());
  // Every caller passes the operand's own indexing map, and the linalg
  // verifier requires one result per dimension of the operand.
  assert(static_cast<int64_t>(map.getNumResults()) == t.getRank() &&
         "the linalg verifier matches indexing maps to operand ranks");
  Value offset;
  int64_t stride = 1;
  for (int64_t r = t.getRank() - 1; r >= 0; --r) {
    AffineExpr e = map.getResult(r);
    Value term;
    if (auto d = dyn_cast<AffineDimExpr>(e))
      term = loopIdx[d.getPosition()];
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      term = idx(c.getValue());
    else
      return where->emitOpError("has an indexing map the CUDA backend does "
                                "not support (only dimensions and constants)");
    Value scaled = mul(term, stride);
    offset = offset ? add(scaled, offset) : scaled;
    if (r > 0) {
      if (ShapedType::isDynamic(t.getDimSize(r)))
        return where->emitOpError("has a dynamic non-leading dimension");
      stride *= t.getDimSize(r);
    }
  }
  return load(operand(tensor), offset ? offset : idx(0))[0];
}

FailureOr<Value>
KernelBuilder::applyConsumers(ArrayRef<linalg::GenericOp> consumers,
                              Value first, Value value, Value row, Value k) {
  Value current = value, previous = first;
  for (linalg::GenericOp consumer : consumers) {
    auto type = cast<RankedTensorType>(consumer->getResult(0).getType());
    SmallVector<Value> loopIdx = {row};
    SmallVector<int64_t> strides(type.getRank(), 1);
    int64_t stride = 1;
    for (int64_t d = type.getRank() - 1; d >= 1; --d) {
      strides[d] = stride;
      stride *= type.getDimSize(d);
    }
    for (int64_t d = 1; d < type.getRank(); ++d)
      loopIdx.push_back(rem(div(k, strides[d]), type.getDimSize(d)));
    SmallVector<Value> args;
    for (OpOperand *in : consumer.getDpsInputOperands()) {
      if (in->get() == previous) {
        args.push_back(current);
        continue;
      }
      FailureOr<Value> a = access(in->get(), consumer.getMatchingIndexingMap(in),
                                  loopIdx, consumer);
      if (failed(a))
        return failure();
      args.push_back(*a);
    }
    // The init, never read (checked when absorbed).
    args.push_back(fp(type.getElementType(), 0.0));
    FailureOr<SmallVector<Value>> y = inlineBody(consumer, args, loopIdx);
    if (failed(y))
      return failure();
    current = (*y)[0];
    previous = consumer->getResult(0);
  }
  return current;
}

void KernelBuilder::buildCombine(
    Region &region, TypeRange types,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)>
        body) {
  buildCombineRegion(loc, region, types, body);
}

void mlir::gnnk::buildCombineRegion(
    Location loc, Region &region, TypeRange types,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)>
        body) {
  Block *block = new Block();
  region.push_back(block);
  for (int side = 0; side < 2; ++side)
    for (Type t : types)
      block->addArgument(t, loc);
  OpBuilder rb = OpBuilder::atBlockEnd(block);
  unsigned n = types.size();
  SmallVector<Value> out = body(rb, block->getArguments().take_front(n),
                                block->getArguments().drop_front(n));
  YieldOp::create(rb, loc, out);
}

LaunchOp KernelBuilder::finish(AffineExpr grid, ArrayRef<AffineExpr> rows,
                               Value graphValue) {
  return finish(ArrayRef<AffineExpr>{grid}, rows, graphValue,
                group->getResultTypes());
}

/// Moves out of each `gnnk.for_edges` of `kernel` what is the same on every
/// edge: side-effect-free ops without regions whose operands come from
/// outside the loop, and loads at such an index of buffers the kernel never
/// writes (MLIR's moveLoopInvariantCode, inner loops first, so that chains
/// move together; constants stay). NVRTC keeps an `__ldg` where it is written,
/// under the loop's guards: a fused edge loop reading a parameter or its row's
/// own features read them once per edge (GATv2's backward: `att` and `x_l[v]`,
/// 16 of a lane's 24 scalar loads per edge in bf16). A moved load runs once per
/// row even for a row without edges; its index is the row's or a parameter's,
/// in bounds either way (the loop runs inside the row's guards).
static void hoistEdgeInvariants(KernelOp kernel) {
  llvm::SmallPtrSet<Value, 8> written;
  kernel.walk([&](Operation *op) {
    if (auto store = dyn_cast<StoreOp>(op))
      written.insert(store.getBuffer());
    else if (auto add = dyn_cast<AtomicAddOp>(op))
      written.insert(add.getBuffer());
  });
  auto constant = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->hasTrait<OpTrait::ConstantLike>();
  };
  kernel.walk([&](ForEdgesOp loop) {
    SmallVector<Region *> regions = {&loop.getBody()};
    if (!loop.getRest().empty())
      regions.push_back(&loop.getRest());
    moveLoopInvariantCode(
        regions,
        [&](Value v, Region *body) {
          return constant(v) || !body->isAncestor(v.getParentRegion());
        },
        [&](Operation *op, Region *) {
          // (Constants stay: the printer writes them as literals where
          // used; a moved op gets a copy of those it uses.)
          if (op->getNumRegions() || op->hasTrait<OpTrait::IsTerminator>() ||
              op->hasTrait<OpTrait::ConstantLike>())
            return false;
          auto load = dyn_cast<LoadOp>(op);
          return load ? !written.contains(load.getBuffer())
                      : isMemoryEffectFree(op);
        },
        [&](Operation *op, Region *) {
          OpBuilder before(loop);
          for (OpOperand &operand : op->getOpOperands())
            if (constant(operand.get()) &&
                loop->isAncestor(operand.get().getDefiningOp()))
              operand.set(
                  before.clone(*operand.get().getDefiningOp())->getResult(0));
          op->moveBefore(loop);
        });
  });
}

LaunchOp KernelBuilder::finish(ArrayRef<AffineExpr> grid,
                               ArrayRef<AffineExpr> rows, Value graphValue,
                               TypeRange launchResultTypes) {
  OpBuilder eb = OpBuilder::atBlockEnd(entry);
  ReturnOp::create(eb, loc);
  marker->erase();
  hoistEdgeInvariants(kernel);
  MLIRContext *ctx = group.getContext();
  kernel.setFunctionTypeAttr(TypeAttr::get(
      FunctionType::get(ctx, entry->getArgumentTypes(), {})));
  SmallVector<Attribute> attrs;
  for (NamedAttrList &a : argAttrs)
    attrs.push_back(a.getDictionary(ctx));
  kernel.setArgAttrsAttr(ArrayAttr::get(ctx, attrs));
  kernel.setGridAttr(AffineMapAttr::get(
      AffineMap::get(0, kNumSizeSymbols, grid, ctx)));
  SmallVector<Attribute> rowMaps;
  for (AffineExpr r : rows)
    rowMaps.push_back(AffineMapAttr::get(sizeMap(r)));
  OpBuilder hb(group);
  return LaunchOp::create(hb, loc, launchResultTypes,
                          FlatSymbolRefAttr::get(kernel.getSymNameAttr()),
                          graphValue, launchOperands,
                          ArrayAttr::get(ctx, rowMaps), DenseI64ArrayAttr(),
                          IntegerAttr());
}
