//===- GNNKernelOps.cpp - gnnk dialect operations -------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"
#include "gnn/Analysis/Schedule.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "llvm/Support/MathExtras.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace mlir::gnnk;

/// `custom<LaunchGraphType>(ref($graph), type($graph))`: a launch on a
/// bipartite graph ends with `on !gnn.graph<bipartite>`; a graph of one node
/// set is implied.
static ParseResult
parseLaunchGraphType(OpAsmParser &parser,
                     std::optional<OpAsmParser::UnresolvedOperand> graph,
                     Type &type) {
  if (failed(parser.parseOptionalKeyword("on"))) {
    if (graph)
      type = mlir::gnn::GraphType::get(parser.getContext());
    return success();
  }
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseType(type))
    return failure();
  if (!graph || !isa<mlir::gnn::GraphType>(type))
    return parser.emitError(at) << "expects `on` and a graph type after a "
                                   "launch on a graph";
  return success();
}

static void printLaunchGraphType(OpAsmPrinter &printer, Operation *,
                                 Value graph, Type type) {
  if (graph && type != mlir::gnn::GraphType::get(type.getContext()))
    printer << "on " << type;
}

#define GET_OP_CLASSES
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.cpp.inc"

void mlir::gnnk::noteRelations(Operation *kernel, int64_t relations) {
  auto old = kernel->getAttrOfType<IntegerAttr>(kRelationsAttrName);
  if (old && old.getInt() <= relations)
    return;
  kernel->setAttr(kRelationsAttrName,
                  IntegerAttr::get(IntegerType::get(kernel->getContext(), 64),
                                   relations));
}

StringRef mlir::gnnk::sizeSymbolName(unsigned i) {
  static const char *names[] = {"nodes", "edges", "graphs", "src_nodes",
                                "dst_nodes"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumSizeSymbols);
  return i < kNumSizeSymbols ? names[i] : "?";
}

RowSpace mlir::gnnk::sideRows(Value graph, bool destination, bool reversed) {
  switch (gnn::nodeSide(graph, destination, reversed)) {
  case gnn::Domain::Src:
    return {kSrcNodesSymbol, "src_nodes"};
  case gnn::Domain::Dst:
    return {kDstNodesSymbol, "dst_nodes"};
  default:
    return {0, "nodes"};
  }
}

RowSpace mlir::gnnk::traversalRows(Value graph, bool reversed) {
  return sideRows(graph, true, reversed);
}

/// A C identifier of lower-case letters, digits and underscores, not
/// starting with a digit.
static bool isIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name[0]) &&
         llvm::all_of(name, [](char c) {
           return llvm::isLower(c) || llvm::isDigit(c) || c == '_';
         });
}

bool mlir::gnnk::isSizeName(StringRef name) {
  for (unsigned i = 0; i < kNumSizeSymbols; ++i)
    if (name == sizeSymbolName(i))
      return true;
  return false;
}

int64_t mlir::gnnk::enclosingTeamLanes(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (auto rows = dyn_cast<ForRowsOp>(p))
      return rows.getLanes();
    if (auto blocks = dyn_cast<ForBlocksOp>(p))
      return blocks.getLanes();
  }
  return 0;
}

FailureOr<AffineExpr> mlir::gnnk::rowsOf(Value value) {
  MLIRContext *ctx = value.getContext();
  auto t = dyn_cast<RankedTensorType>(value.getType());
  if (!t || t.getRank() < 1)
    return failure();
  if (!ShapedType::isDynamic(t.getDimSize(0)))
    return getAffineConstantExpr(t.getDimSize(0), ctx);
  gnn::Domain d = gnn::inferDomain(value);
  if (d == gnn::Domain::Node)
    return getAffineSymbolExpr(0, ctx);
  if (d == gnn::Domain::Edge)
    return getAffineSymbolExpr(1, ctx);
  if (d == gnn::Domain::Src)
    return getAffineSymbolExpr(kSrcNodesSymbol, ctx);
  if (d == gnn::Domain::Dst)
    return getAffineSymbolExpr(kDstNodesSymbol, ctx);
  Operation *def = value.getDefiningOp();
  if (auto launch = dyn_cast_or_null<LaunchOp>(def)) {
    // A capped count (the minimum of several results) has no single
    // expression.
    unsigned i = cast<OpResult>(value).getResultNumber();
    AffineMap rows = cast<AffineMapAttr>(launch.getRows()[i]).getValue();
    if (rows.getNumResults() != 1)
      return failure();
    return rows.getResult(0);
  }
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(def))
    return rowsOf(fill.getOutputs()[0]);
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def)) {
    if (auto dim = empty.getDynamicSizes()[0].getDefiningOp<tensor::DimOp>())
      return rowsOf(dim.getSource());
    return failure();
  }
  if (auto group = dyn_cast_or_null<gnn::KernelGroupOp>(def))
    return rowsOf(group.getYield().getValues()[cast<OpResult>(value).getResultNumber()]);
  if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                      tensor::CastOp>(def))
    return rowsOf(def->getOperand(0));
  if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def)) {
    // The rows of an operand indexed by the first loop in the first place.
    for (OpOperand &operand : def->getOpOperands()) {
      auto map = linalgOp.getMatchingIndexingMap(&operand);
      if (map.getNumResults() && map.getResult(0) == getAffineDimExpr(0, ctx))
        if (FailureOr<AffineExpr> r = rowsOf(operand.get()); succeeded(r))
          return r;
    }
    return failure();
  }
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      return getAffineSymbolExpr(0, ctx);
  return failure();
}

FailureOr<int64_t> mlir::gnnk::rowElementsOf(Value value, Operation *where) {
  auto t = dyn_cast<RankedTensorType>(value.getType());
  if (!t || t.getRank() < 1)
    return where->emitOpError("expects ranked tensors of rank >= 1 in the "
                              "CUDA backend");
  int64_t n = 1;
  for (int64_t d : t.getShape().drop_front()) {
    if (ShapedType::isDynamic(d))
      return where->emitOpError()
             << "has a tensor " << t
             << " with a dynamic non-leading dimension, which the CUDA "
                "backend does not support";
    // A row that wraps would size its buffers silently wrong.
    if (llvm::MulOverflow(n, d, n))
      return where->emitOpError()
             << "expects a tensor whose rows hold fewer than 2^63 elements "
                "but got "
             << t;
  }
  return n;
}

static bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// Checks that `map` is a launch-shape map: no dimensions, the size symbols,
/// one result.
/// A launch shape: an affine map of the size symbols with one result, or
/// several whose minimum is the value (like `affine.min`).
static LogicalResult verifySizeMap(Operation *op, AffineMap map,
                                   StringRef what) {
  if (map.getNumDims() != 0 || map.getNumSymbols() != kNumSizeSymbols ||
      map.getNumResults() < 1)
    return op->emitOpError() << "expects " << what
                             << " to be an affine map ()[s0, s1, s2, s3, s4] "
                                "-> (e, ...) of nodes, edges, graphs, source "
                                "and destination nodes (the minimum of its "
                                "results) but got "
                             << AffineMapAttr::get(map);
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType = [](Builder &builder, ArrayRef<Type> argTypes,
                          ArrayRef<Type> results,
                          function_interface_impl::VariadicFlag,
                          std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult KernelOp::verify() {
  // The name is printed into the CUDA source as the kernel's: a C
  // identifier, nothing the printer would have to escape.
  StringRef name = getSymName();
  if (name.empty() || llvm::isDigit(name[0]) ||
      !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return emitOpError("expects its name to be a C identifier (letters, "
                       "digits and underscores, not starting with a digit) "
                       "but got ")
           << getSymNameAttr();
  if (std::string why = reservedKernelName(name); !why.empty())
    return emitOpError("expects its name not to be reserved in CUDA C++ but "
                       "got '")
           << name << "' (" << why << ")";
  if (!getFunctionType().getResults().empty())
    return emitOpError("expects no results but got ")
           << getFunctionType().getResults().size();
  int64_t block = getBlock();
  if (block < 32 || block > 1024 || block % 32)
    return emitOpError("expects block to be a multiple of 32 in [32, 1024] "
                       "but got ")
           << block;
  // 2048 threads per SM on sm_90 (the architecture the runtime targets).
  if (std::optional<uint64_t> minBlocks = getMinBlocks();
      minBlocks && *minBlocks * block > 2048)
    return emitOpError("expects min_blocks blocks of ")
           << block << " threads to fit in an SM's 2048 but got min_blocks "
           << *minBlocks;
  if (failed(verifySizeMap(*this, getGrid(), "grid")))
    return failure();
  Block &entry = getBody().front();
  if (entry.getNumArguments() != getArgumentTypes().size())
    return emitOpError("expects one entry block argument per parameter");
  llvm::SmallDenseSet<int64_t> operands, results;
  for (unsigned i = 0, e = getNumArguments(); i < e; ++i) {
    Type type = getArgumentTypes()[i];
    DictionaryAttr attrs = getArgAttrDict(i);
    Attribute operand = attrs ? attrs.get(kOperand) : Attribute();
    Attribute result = attrs ? attrs.get(kResult) : Attribute();
    Attribute graph = attrs ? attrs.get(kGraph) : Attribute();
    Attribute size = attrs ? attrs.get(kSize) : Attribute();
    if (attrs && attrs.get(kAccumulate) &&
        (!result || !isa<UnitAttr>(attrs.get(kAccumulate))))
      return emitOpError() << "expects gnnk.accumulate (a unit attribute) "
                              "only on result parameters but parameter #"
                           << i << " has it";
    int bindings = !!operand + !!result + !!graph + !!size;
    if (bindings != 1)
      return emitOpError() << "expects parameter #" << i
                           << " to have exactly one of gnnk.operand, "
                              "gnnk.result, gnnk.graph, gnnk.size but got "
                           << bindings;
    auto memref = dyn_cast<MemRefType>(type);
    if (operand || result) {
      auto index = dyn_cast<IntegerAttr>(operand ? operand : result);
      if (!index || index.getInt() < 0)
        return emitOpError() << "expects parameter #" << i
                             << " to bind a nonnegative operand or result "
                                "number";
      if (!memref || !isa<FloatType>(memref.getElementType()))
        return emitOpError() << "expects parameter #" << i
                             << " (a tensor) to be a float buffer but got "
                             << type;
      if (!(operand ? operands : results).insert(index.getInt()).second)
        return emitOpError() << "binds " << (operand ? "operand" : "result")
                             << " #" << index.getInt() << " twice";
    }
    if (graph) {
      auto name = dyn_cast<StringAttr>(graph);
      static const char *known[] = {
          "csr_row_ptr",        "csr_col",  "csr_dst",    "csr_edge",
          "csc_col_ptr",        "csc_row",  "csc_to_csr", "csr_rows_by_degree",
          "csc_cols_by_degree", "graph_ptr", "csr_type"};
      if (!name || llvm::find(known, name.getValue()) == std::end(known))
        return emitOpError() << "expects parameter #" << i
                             << " to name a graph array but got " << graph;
      if (!memref || !memref.getElementType().isSignlessInteger() ||
          (memref.getElementType().getIntOrFloatBitWidth() != 32 &&
           memref.getElementType().getIntOrFloatBitWidth() != 64))
        return emitOpError() << "expects graph array parameter #" << i
                             << " to be an i32 or i64 buffer but got " << type;
    }
    if (Attribute formula = attrs ? attrs.get(kFormula) : Attribute()) {
      auto name = dyn_cast_or_null<StringAttr>(size);
      if (!isa<FormulaAttr>(formula) || !name || !isIdentifier(name.getValue()))
        return emitOpError()
               << "expects gnnk.formula on parameter #" << i
               << " to be a #gnnk.formula beside a gnnk.size naming it with "
                  "an identifier but got "
               << formula;
    } else if (size) {
      auto name = dyn_cast<StringAttr>(size);
      if (!name || !isSizeName(name.getValue()))
        return emitOpError() << "expects parameter #" << i
                             << " to name nodes, edges, graphs, src_nodes "
                                "or dst_nodes but got "
                             << size;
      if (!type.isInteger(64))
        return emitOpError() << "expects size parameter #" << i
                             << " to be i64 but got " << type;
    }
  }
  for (auto [what, set] : {std::pair{"operand", &operands},
                           std::pair{"result", &results}})
    for (int64_t k = 0, e = set->size(); k < e; ++k)
      if (!set->count(k))
        return emitOpError() << "expects " << what << " bindings numbered 0 to "
                             << e - 1 << " but #" << k << " is missing";
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

LogicalResult LaunchOp::verify() {
  if (getRows().size() != getNumResults())
    return emitOpError() << "expects one row count per result but got "
                         << getRows().size() << " for " << getNumResults();
  for (Attribute a : getRows())
    if (failed(verifySizeMap(*this, cast<AffineMapAttr>(a).getValue(),
                             "a row count")))
      return failure();
  if (std::optional<ArrayRef<int64_t>> tied = getTied()) {
    if (tied->size() != getNumResults())
      return emitOpError() << "expects one tied entry per result but got "
                           << tied->size();
    for (auto [i, t] : llvm::enumerate(*tied))
      if (t >= 0 && (t >= (int64_t)getArgs().size() ||
                     getArgs()[t].getType() != getResult(i).getType()))
        return emitOpError() << "ties result #" << i
                             << " to an operand that does not exist or has "
                                "another type";
  }
  if (std::optional<int64_t> k = getOverlaps()) {
    if (*k < 1)
      return emitOpError() << "expects overlaps >= 1 but got " << *k;
    std::optional<ArrayRef<int64_t>> tied = getTied();
    if (!tied || llvm::any_of(*tied, [](int64_t t) { return t < 0; }))
      return emitOpError() << "overlaps the launches before it, so it expects "
                              "every result tied to an operand (written in "
                              "place), but some result is a fresh buffer";
  }
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel =
      symbolTable.lookupNearestSymbolFrom<KernelOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError() << "expects '" << getKernel()
                         << "' to name a gnnk.kernel";
  unsigned operands = 0, results = 0;
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = kernel.getArgAttrDict(i);
    operands += attrs && attrs.get(KernelOp::kOperand);
    results += attrs && attrs.get(KernelOp::kResult);
  }
  if (operands != getArgs().size() || results != getNumResults())
    return emitOpError() << "passes " << getArgs().size() << " operands and "
                         << getNumResults() << " results but @" << getKernel()
                         << " binds " << operands << " and " << results;
  return success();
}

//===----------------------------------------------------------------------===//
// Thread mappings
//===----------------------------------------------------------------------===//

/// The entry block of a mapping's region has `count` index arguments and a
/// gnnk.yield without values at the end.
static LogicalResult verifyMapping(Operation *op, Region &body,
                                   unsigned count) {
  Block &block = body.front();
  if (block.getNumArguments() != count ||
      !llvm::all_of(block.getArgumentTypes(),
                    [](Type t) { return t.isIndex(); }))
    return op->emitOpError() << "expects " << count
                             << " index block arguments";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || !yield.getValues().empty())
    return op->emitOpError("expects its body to end with an empty gnnk.yield");
  return success();
}

static LogicalResult verifyLanes(Operation *op, int64_t lanes) {
  if (lanes < 1 || lanes > 32 || !isPowerOfTwo(lanes))
    return op->emitOpError() << "expects lanes to be a power of two in "
                                "[1, 32] but got "
                             << lanes;
  return success();
}

LogicalResult ForElementsOp::verify() {
  return verifyMapping(*this, getBody(), 1);
}

LogicalResult ForRowsOp::verify() {
  if (failed(verifyLanes(*this, getLanes())))
    return failure();
  return verifyMapping(*this, getBody(), 2);
}

LogicalResult ForBlocksOp::verify() {
  if (failed(verifyLanes(*this, getLanes())))
    return failure();
  int64_t block = (*this)->getParentOfType<KernelOp>().getBlock();
  if (block % getLanes())
    return emitOpError() << "expects lanes to divide the kernel's block of "
                         << block << " but got " << getLanes();
  return verifyMapping(*this, getBody(), 3);
}

//===----------------------------------------------------------------------===//
// SharedOp
//===----------------------------------------------------------------------===//

LogicalResult SharedOp::verify() {
  int64_t size = getSize();
  unsigned bits = getBuffer().getType().getElementTypeBitWidth();
  if (size < 1 || size > ::gnn::kBlockSharedBytes * 8 / bits)
    return emitOpError() << "expects 1 to "
                         << ::gnn::kBlockSharedBytes * 8 / bits
                         << " elements (48 KiB) but got " << size;
  return success();
}

//===----------------------------------------------------------------------===//
// ForEdgesOp
//===----------------------------------------------------------------------===//

/// Checks a block of `edges` edges (slot and neighbour pairs) then the
/// carried values, yielding them; `what` names it in diagnostics.
static LogicalResult verifyEdgeBlock(ForEdgesOp op, Block &block,
                                     int64_t edges, StringRef what) {
  unsigned carried = op.getInits().size();
  if (block.getNumArguments() != 2 * edges + carried)
    return op.emitOpError()
           << "expects " << 2 * edges << " + " << carried << " " << what
           << " arguments (slot and neighbour of " << edges
           << " edge(s), carried values) but got " << block.getNumArguments();
  for (int64_t i = 0; i < 2 * edges; ++i)
    if (!block.getArgument(i).getType().isIndex())
      return op.emitOpError() << "expects the slot and neighbour arguments of "
                                 "the "
                              << what << " to be index";
  for (unsigned i = 0; i < carried; ++i)
    if (block.getArgument(2 * edges + i).getType() !=
            op.getInits()[i].getType() ||
        op.getResult(i).getType() != op.getInits()[i].getType())
      return op.emitOpError() << "expects carried value #" << i
                              << " to have one type as init, " << what
                              << " argument and result";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValues().getTypes() != op.getInits().getTypes())
    return op.emitOpError() << "expects its " << what
                            << " to yield the carried values";
  return success();
}

LogicalResult ForEdgesOp::verify() {
  int64_t group = getEdgesPerStep();
  if (group < 1 || group > 8)
    return emitOpError() << "expects group in [1, 8] but got " << group;
  if (failed(verifyEdgeBlock(*this, getBody().front(), group, "body")))
    return failure();
  if ((group > 1) != !getRest().empty())
    return emitOpError() << "expects a rest region exactly when group > 1 "
                            "(group "
                         << group << ", "
                         << (getRest().empty() ? "none" : "one") << " found)";
  if (!getRest().empty()) {
    if (!getRest().hasOneBlock())
      return emitOpError("expects the rest region to have one block");
    if (failed(verifyEdgeBlock(*this, getRest().front(), 1, "rest region")))
      return failure();
  }
  for (Value array : {getNbrs(), getPerm()})
    if (array && !cast<MemRefType>(array.getType())
                      .getElementType()
                      .isSignlessInteger())
      return emitOpError("expects integer index arrays");
  if (!getMerge().empty()) {
    Block &merge = getMerge().front();
    SmallVector<Type> expected(getInits().getTypes());
    llvm::append_range(expected, getInits().getTypes());
    auto mergeYield = dyn_cast<YieldOp>(merge.getTerminator());
    if (TypeRange(merge.getArgumentTypes()) != TypeRange(expected) ||
        !mergeYield || mergeYield.getValues().getTypes() != getInits().getTypes())
      return emitOpError("expects the merge region to take two sets of "
                         "carried values and yield one");
  }
  if (getUnroll() && (*getUnroll() < 1 || *getUnroll() > 16))
    return emitOpError() << "expects unroll in [1, 16] but got "
                         << *getUnroll();
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The combine region takes two copies of the values' types and yields one.
static LogicalResult verifyCombine(Operation *op, Region &combine,
                                   TypeRange types) {
  Block &block = combine.front();
  SmallVector<Type> expected(types.begin(), types.end());
  expected.append(types.begin(), types.end());
  if (TypeRange(block.getArgumentTypes()) != TypeRange(expected))
    return op->emitOpError("expects the combine region to take this lane's "
                           "values then the partner's");
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValues().getTypes() != types)
    return op->emitOpError("expects the combine region to yield one value "
                           "per reduced value");
  if (types.empty())
    return op->emitOpError("expects at least one value");
  if (op->getResultTypes() != types)
    return op->emitOpError("expects results of the reduced values' types");
  return success();
}

/// Reductions produce values of their operands' types.
static LogicalResult inferSameTypes(ValueRange operands,
                                    SmallVectorImpl<Type> &types) {
  llvm::append_range(types, operands.getTypes());
  return success();
}

LogicalResult TeamReduceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  return inferSameTypes(operands, types);
}

LogicalResult BlockReduceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  return inferSameTypes(operands, types);
}

LogicalResult TeamReduceOp::verify() {
  int64_t stride = getStride(), width = getWidth();
  if (!isPowerOfTwo(stride) || !isPowerOfTwo(width) || stride >= width)
    return emitOpError() << "expects powers of two stride < width but got "
                            "stride "
                         << stride << " and width " << width;
  int64_t lanes = enclosingTeamLanes(*this);
  if (!lanes)
    return emitOpError("expects to be inside gnnk.for_rows or "
                       "gnnk.for_blocks");
  if (width > lanes)
    return emitOpError() << "expects width to be at most the team's " << lanes
                         << " lanes but got " << width;
  return verifyCombine(*this, getCombine(), getValues().getTypes());
}

LogicalResult BlockReduceOp::verify() {
  if (!(*this)->getParentOfType<ForBlocksOp>())
    return emitOpError("expects to be inside gnnk.for_blocks");
  return verifyCombine(*this, getCombine(), getValues().getTypes());
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// 1, 2 or 4 values of the buffer's element type.
/// Loads and stores move 1, 2, 4 or 8 values of the buffer's element type,
/// or f32 values for a bf16 or f16 buffer (widened on load, rounded on
/// store).
static LogicalResult verifyAccess(Operation *op, Value buffer,
                                  TypeRange values) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  size_t n = values.size();
  if (n != 1 && n != 2 && n != 4 && n != 8)
    return op->emitOpError() << "expects 1, 2, 4 or 8 values but got " << n;
  Type want = mlir::gnn::arithmeticType(element);
  for (Type t : values) {
    if (t == want)
      continue;
    if (want != element)
      return op->emitOpError()
             << "expects values of type " << want
             << " (the arithmetic type of the buffer's element type " << element
             << ") but got " << t;
    return op->emitOpError() << "expects values of the buffer's element "
                                "type "
                             << element << " but got " << t;
  }
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyAccess(*this, getBuffer(), getValues().getTypes());
}

void LoadOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getBufferMutable());
}

LogicalResult StoreOp::verify() {
  return verifyAccess(*this, getBuffer(), getValues().getTypes());
}

LogicalResult AtomicAddOp::verify() {
  Type element = cast<MemRefType>(getBuffer().getType()).getElementType();
  if (mlir::gnn::isStorageFloatType(element))
    return emitOpError() << "expects a buffer of f32 or f64 (sums in the "
                            "arithmetic type) but got "
                         << getBuffer().getType();
  if (getValue().getType() != element)
    return emitOpError() << "expects a value of the buffer's element type "
                         << element << " but got " << getValue().getType();
  auto arg = dyn_cast<BlockArgument>(getBuffer());
  auto kernel = arg ? dyn_cast<KernelOp>(arg.getOwner()->getParentOp())
                    : KernelOp();
  if (!kernel || !kernel.getArgAttr(arg.getArgNumber(), KernelOp::kAccumulate))
    return emitOpError("expects a result parameter marked gnnk.accumulate "
                       "(zeroed before the launch) as its buffer");
  return success();
}

void AtomicAddOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getBufferMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getBufferMutable());
}

void StoreOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), &getBufferMutable());
}
