//===- ProgramLowering.cpp - a lowered gnn function as a runtime Program --===//
//
// Part of gnnc. Walks a function after gnn-cuda-pipeline: gnnk.launch ops
// become kernel launches whose arguments follow the kernel's parameter
// bindings, linalg.matmul becomes a cuBLAS GEMM, reshapes become aliases of
// one buffer, and the values returned are written straight into the output
// buffers. Nothing here changes the IR.
//
//===----------------------------------------------------------------------===//

#include "gnn/Target/CUDA/TranslateToCUDA.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNFloatTypes.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"
#include "gnn/Dialect/GNN/Transforms/GemmBias.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"
#include "gnn/Target/CUDA/CUDAPrinter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::gnn;
namespace rt = ::gnn::runtime;

/// A launch-shape affine expression as a Program formula. Its sums,
/// products, floor divisions and remainders print in parentheses, as the
/// Program text has always had them.
static rt::Formula toFormula(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return rt::Formula::constant(c.getValue());
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    rt::StatusOr<rt::Formula> name =
        rt::Formula::name(gnnk::sizeSymbolName(s.getPosition()).str());
    assert(name.ok() && "launch shapes use the size symbols nodes, edges "
                        "and graphs only (the gnnk verifiers check)");
    return *name;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  rt::Formula l = toFormula(bin.getLHS()), r = toFormula(bin.getRHS());
  switch (bin.getKind()) {
  case AffineExprKind::Add:
    return rt::Formula::parenthesized(std::move(l) + r);
  case AffineExprKind::Mul:
    return rt::Formula::parenthesized(std::move(l) * r);
  case AffineExprKind::CeilDiv:
    return rt::Formula::ceilDiv(std::move(l), r);
  case AffineExprKind::FloorDiv:
    return rt::Formula::parenthesized(std::move(l) / r);
  default:
    return rt::Formula::parenthesized(std::move(l) % r);
  }
}

/// A launch-shape map as a Program formula: its result, or the minimum of
/// its results.
static rt::Formula toFormula(AffineMap map) {
  rt::Formula f = toFormula(map.getResult(0));
  for (AffineExpr e : map.getResults().drop_front())
    f = rt::Formula::min(std::move(f), toFormula(e));
  return f;
}

/// A kernel parameter's formula (gnnk.formula) as a Program formula,
/// operator by operator.
static rt::Formula toFormula(gnnk::FormulaAttr f) {
  using Kind = gnnk::FormulaKind;
  switch (f.getKind()) {
  case Kind::Constant:
    return rt::Formula::constant(f.getValue());
  case Kind::Name: {
    rt::StatusOr<rt::Formula> name =
        rt::Formula::name(f.getName().getValue().str());
    assert(name.ok() && "the #gnnk.formula verifier accepts the runtime's "
                        "names only");
    return *name;
  }
  default:
    break;
  }
  rt::Formula l = toFormula(f.getOperands()[0]),
              r = toFormula(f.getOperands()[1]);
  switch (f.getKind()) {
  case Kind::Add: return std::move(l) + r;
  case Kind::Sub: return std::move(l) - r;
  case Kind::Mul: return std::move(l) * r;
  case Kind::Div: return std::move(l) / r;
  case Kind::Mod: return std::move(l) % r;
  case Kind::CeilDiv: return rt::Formula::ceilDiv(std::move(l), r);
  case Kind::Min: return rt::Formula::min(std::move(l), r);
  default: return rt::Formula::max(std::move(l), r);
  }
}

/// Elements per row of a tensor (static trailing dimensions).
static FailureOr<int64_t> rowElements(Value value, Operation *where) {
  return gnnk::rowElementsOf(value, where);
}

/// The row count of a value as a formula: a constant for a static leading
/// dimension, else nodes or edges from its domain.
static FailureOr<rt::Formula> rowsFormula(Value value) {
  FailureOr<AffineExpr> rows = gnnk::rowsOf(value);
  if (succeeded(rows))
    return toFormula(*rows);
  Operation *def = value.getDefiningOp();
  InFlightDiagnostic diag =
      def ? def->emitOpError() : emitError(value.getLoc());
  diag << "produces a tensor whose leading dimension cannot be told to count "
          "nodes or edges";
  return failure();
}

/// True for edge tensors (one row per edge), which are in CSR slot order
/// inside a Program and in edge-list order at its boundary.
static bool isEdgeTensor(Value v) {
  FailureOr<AffineExpr> rows = gnnk::rowsOf(v);
  return succeeded(rows) &&
         *rows == getAffineSymbolExpr(1, v.getContext());
}

/// Whether matmul `mm` adds into its init's buffer (beta = 1) instead of
/// copying it first: an init that only `mm` reads, in a buffer of its own
/// (another matmul's result, or a launch's that is not updated in place).
/// Terms summed by a chain of matmuls (a layer's `x W_r + agg W_l + b`)
/// then cost no copies.
static bool accumulatesInPlace(linalg::MatmulOp mm) {
  Value init = mm.getOutputs()[0];
  if (!init.hasOneUse())
    return false;
  Operation *def = init.getDefiningOp();
  if (isa_and_nonnull<linalg::MatmulOp>(def))
    return true;
  auto l = dyn_cast_if_present<gnnk::LaunchOp>(def);
  return l && (!l.getTied() ||
               (*l.getTied())[cast<OpResult>(init).getResultNumber()] < 0);
}

namespace {

/// Builds the Program while walking the function.
class Lowering {
public:
  Lowering(func::FuncOp func, int indexBits, bool csrOrderEdges)
      : func(func), indexBits(indexBits), csrOrderEdges(csrOrderEdges) {}

  FailureOr<rt::Program> run();

private:
  func::FuncOp func;
  int indexBits;
  bool csrOrderEdges;
  rt::Program program;
  llvm::DenseMap<Value, std::string> buffer;
  /// Values written into outputs: the function's result number.
  llvm::DenseMap<Value, unsigned> reserved;
  llvm::StringMap<size_t> declared;
  SymbolTableCollection symbols; ///< the kernels, looked up by launches
  int temps = 0;
  /// The conversion kernels of other types than f32 launched (then listed,
  /// in the order of the prelude).
  llvm::SmallSetVector<StringRef, 4> conversions;
  /// Per launch step (by index): the buffers it writes (its results).
  llvm::DenseMap<size_t, SmallVector<std::string>> launchWrites;

  /// The buffers step `i` reads and writes.
  struct Access {
    SmallVector<std::string> reads, writes;
    /// Whether the two steps may not run at the same time: one writes
    /// what the other reads or writes.
    bool clashes(const Access &o) const {
      for (const std::string &w : writes)
        if (llvm::is_contained(o.reads, w) || llvm::is_contained(o.writes, w))
          return true;
      for (const std::string &w : o.writes)
        if (llvm::is_contained(reads, w))
          return true;
      return false;
    }
  };
  Access access(size_t i) const;
  /// Row-split gemms (weight gradients) moved to run beside the steps
  /// around them that they do not depend on (GemmStep::overlaps).
  void placeRowSplitsBeside();

  FailureOr<rt::Formula> size(Value v, Operation *where) {
    FailureOr<rt::Formula> rows = rowsFormula(v);
    FailureOr<int64_t> row = rowElements(v, where);
    if (failed(rows) || failed(row))
      return failure();
    return *rows * rt::Formula::constant(*row);
  }
  LogicalResult declare(const std::string &name, rt::BufferRole role,
                        const rt::Formula &elements, Value v, Operation *where,
                        rt::BufferUse use = rt::BufferUse::None,
                        int64_t index = -1) {
    FailureOr<rt::DType> dtype = dtypeOf(v, where);
    if (failed(dtype))
      return failure();
    declared[name] = program.buffers.size();
    program.buffers.push_back({name, role, *dtype, elements, use, index});
    return success();
  }
  /// The buffer element type of tensor `v`: f32, f64, bf16 or f16.
  static FailureOr<rt::DType> dtypeOf(Value v, Operation *where) {
    Type element = getElementTypeOrSelf(v.getType());
    if (element.isF32())
      return rt::DType::F32;
    if (element.isF64())
      return rt::DType::F64;
    if (element.isBF16())
      return rt::DType::BF16;
    if (element.isF16())
      return rt::DType::F16;
    return where->emitOpError()
           << "produces or reads a tensor of " << element
           << "; the CUDA backend supports only f16, bf16, f32 and f64 tensors";
  }
  /// A fresh buffer of `elements` for `v` (a temp, or the output it was
  /// reserved for).
  FailureOr<std::string> define(Value v, const rt::Formula &elements,
                                Operation *where) {
    std::string name;
    rt::BufferRole role = rt::BufferRole::Temp;
    rt::BufferUse use = rt::BufferUse::None;
    int64_t index = -1;
    auto it = reserved.find(v);
    if (it != reserved.end()) {
      index = it->second;
      name = "result" + std::to_string(index);
      role = rt::BufferRole::Output;
      use = rt::BufferUse::Result;
    } else {
      name = "t" + std::to_string(temps++);
    }
    if (failed(declare(name, role, elements, v, where, use, index)))
      return failure();
    buffer[v] = name;
    return name;
  }
  FailureOr<std::string> define(Value v, Operation *where) {
    FailureOr<rt::Formula> elements = size(v, where);
    if (failed(elements))
      return failure();
    return define(v, *elements, where);
  }
  /// The buffer holding `v`, materialising constant fills on demand.
  FailureOr<std::string> use(Value v, Operation *where);
  LogicalResult lowerLaunch(gnnk::LaunchOp launch);
  LogicalResult lowerMatmul(linalg::MatmulOp mm);
  /// Converts an edge tensor of `elementType` between edge-list and slot
  /// order (`toSlots`) with the prelude's kernel of that element size.
  /// Whether `v` crosses the boundary through a conversion step: edge
  /// tensors, unless the graph's edges are already in CSR order.
  bool converted(Value v) const { return !csrOrderEdges && isEdgeTensor(v); }
  void launchConversion(bool toSlots, Type elementType, const std::string &out,
                        const std::string &in, int64_t width);
};

} // namespace

FailureOr<std::string> Lowering::use(Value v, Operation *where) {
  auto it = buffer.find(v);
  if (it != buffer.end())
    return it->second;
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    // The fill value is an arith.constant (run() rejects the arguments that
    // are not tensors and every other live op before the fill's readers); it
    // holds no FloatAttr only when the fill is of integers.
    Value value = fill.getInputs()[0];
    auto c = value.getDefiningOp<arith::ConstantOp>();
    auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
    if (!f)
      return fill.emitOpError() << "expects a float constant to fill with but "
                                   "got a value of type "
                                << value.getType();
    FailureOr<std::string> name = define(v, fill);
    if (failed(name))
      return failure();
    program.steps.push_back(rt::FillStep{*name, f.getValueAsDouble()});
    return name;
  }
  if (auto empty = v.getDefiningOp<tensor::EmptyOp>()) {
    FailureOr<std::string> name = define(v, empty);
    if (failed(name))
      return failure();
    program.steps.push_back(rt::FillStep{*name, 0.0});
    return name;
  }
  return where->emitOpError("reads a value the CUDA backend has no buffer for");
}

static rt::KernelArg bufferArg(const std::string &name) {
  rt::KernelArg a;
  a.kind = rt::KernelArg::Kind::Buffer;
  a.name = name;
  return a;
}

static rt::KernelArg graphArg(const std::string &name) {
  rt::KernelArg a;
  a.kind = rt::KernelArg::Kind::Graph;
  a.name = name;
  return a;
}

static rt::KernelArg intArg(rt::Formula f) {
  rt::KernelArg a;
  a.kind = rt::KernelArg::Kind::I64;
  a.integer = std::move(f);
  return a;
}

void Lowering::launchConversion(bool toSlots, Type elementType,
                                const std::string &out, const std::string &in,
                                int64_t width) {
  rt::LaunchStep l;
  if (elementType.isF64())
    l.kernel = toSlots ? kEdgesToSlotsF64 : kSlotsToEdgesF64;
  else if (elementType.isBF16())
    l.kernel = toSlots ? kEdgesToSlotsBF16 : kSlotsToEdgesBF16;
  else if (elementType.isF16())
    l.kernel = toSlots ? kEdgesToSlotsF16 : kSlotsToEdgesF16;
  else
    l.kernel = toSlots ? kEdgesToSlots : kSlotsToEdges;
  if (!elementType.isF32())
    conversions.insert(l.kernel);
  l.grid[0] =
      rt::Formula::ceilDiv(rt::Formula::edges() * rt::Formula::constant(width),
                           rt::Formula::constant(256));
  l.grid[1] = l.grid[2] = rt::Formula::constant(1);
  l.block[0] = 256;
  l.sharedBytes = rt::Formula::constant(0);
  l.args = {bufferArg(out), bufferArg(in), graphArg("csr_edge"),
            intArg(rt::Formula::edges()), intArg(rt::Formula::constant(width))};
  launchWrites[program.steps.size()] = {out};
  program.steps.push_back(std::move(l));
}

LogicalResult Lowering::lowerLaunch(gnnk::LaunchOp launch) {
  // One table for the whole module (lookupNearestSymbolFrom scans the
  // module per launch: quadratic in the kernels, 40,000 chained spmm took
  // 24 s).
  auto kernel = symbols.lookupNearestSymbolFrom<gnnk::KernelOp>(
      launch, launch.getKernelAttr());
  // The gnnk.launch verifier (verifySymbolUses) looks the kernel up the same
  // way, and the input is verified before it is lowered.
  assert(kernel && "the gnnk.launch verifier requires a gnnk.kernel");
  // Results first (their buffers), then the arguments in parameter order.
  SmallVector<std::string> results;
  for (auto [i, r] : llvm::enumerate(launch.getResults())) {
    if (launch.getTied() && (*launch.getTied())[i] >= 0) {
      // Updated in place: the operand's buffer.
      FailureOr<std::string> b =
          use(launch.getArgs()[(*launch.getTied())[i]], launch);
      if (failed(b))
        return failure();
      buffer[r] = *b;
      results.push_back(*b);
      continue;
    }
    FailureOr<int64_t> row = rowElements(r, launch);
    if (failed(row))
      return failure();
    AffineMap rows = cast<AffineMapAttr>(launch.getRows()[i]).getValue();
    FailureOr<std::string> name =
        define(r, toFormula(rows) * rt::Formula::constant(*row), launch);
    if (failed(name))
      return failure();
    results.push_back(*name);
  }
  // Results the kernel adds into (gnnk.atomic_add) start at zero.
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = kernel.getArgAttrDict(i);
    auto k = attrs ? attrs.getAs<IntegerAttr>(gnnk::KernelOp::kResult)
                   : IntegerAttr();
    if (!k || !attrs.get(gnnk::KernelOp::kAccumulate))
      continue;
    if (launch.getTied() && (*launch.getTied())[k.getInt()] >= 0)
      return launch.emitOpError()
             << "updates result #" << k.getInt()
             << " in place, but its kernel adds into it from zero "
                "(gnnk.accumulate)";
    program.steps.push_back(rt::FillStep{results[k.getInt()], 0.0});
  }
  rt::LaunchStep l;
  l.kernel = kernel.getSymName().str();
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = kernel.getArgAttrDict(i);
    if (auto k = attrs.getAs<IntegerAttr>(gnnk::KernelOp::kOperand)) {
      FailureOr<std::string> b = use(launch.getArgs()[k.getInt()], launch);
      if (failed(b))
        return failure();
      l.args.push_back(bufferArg(*b));
    } else if (auto k = attrs.getAs<IntegerAttr>(gnnk::KernelOp::kResult)) {
      l.args.push_back(bufferArg(results[k.getInt()]));
    } else if (auto g = attrs.getAs<StringAttr>(gnnk::KernelOp::kGraph)) {
      l.args.push_back(graphArg(g.getValue().str()));
    } else {
      // A formula of the sizes (gnnk.formula), or a size.
      if (auto f = attrs.getAs<gnnk::FormulaAttr>(gnnk::KernelOp::kFormula)) {
        l.args.push_back(intArg(toFormula(f)));
        continue;
      }
      // The gnnk.kernel verifier requires a size name here.
      auto s = attrs.getAs<StringAttr>(gnnk::KernelOp::kSize);
      rt::StatusOr<rt::Formula> f = rt::Formula::name(s.getValue().str());
      assert(f.ok() && "the gnnk.kernel verifier accepts the runtime's size "
                       "names only");
      l.args.push_back(intArg(*f));
    }
  }
  l.grid[0] = toFormula(kernel.getGrid());
  l.grid[1] = l.grid[2] = rt::Formula::constant(1);
  l.block[0] = static_cast<unsigned>(kernel.getBlock());
  l.sharedBytes = rt::Formula::constant(0);
  if (std::optional<int64_t> k = launch.getOverlaps()) {
    // Only where the steps right before it are those launches (no fill or
    // conversion between): else it runs after them, which is always right.
    size_t n = program.steps.size();
    bool launches = static_cast<size_t>(*k) <= n;
    for (size_t i = n - std::min<size_t>(n, *k); launches && i < n; ++i) {
      const auto *o = std::get_if<rt::LaunchStep>(&program.steps[i]);
      launches = o && !o->overlaps;
    }
    if (launches)
      l.overlaps = *k;
  }
  launchWrites[program.steps.size()].assign(results.begin(), results.end());
  program.steps.push_back(std::move(l));
  return success();
}

LogicalResult Lowering::lowerMatmul(linalg::MatmulOp mm) {
  auto maps = mm.getIndexingMapsArray();
  MLIRContext *ctx = mm.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  auto map = [&](AffineExpr r, AffineExpr c) {
    return AffineMap::get(3, 0, {r, c}, ctx);
  };
  // C += A B, A Bᵀ (gnn-autodiff's dA = dC Bᵀ) or Aᵀ B (its dB = Aᵀ dC).
  bool transA = maps[0] == map(k, i), transB = maps[1] == map(j, k);
  if (!(transA || maps[0] == map(i, k)) || !(transB || maps[1] == map(k, j)) ||
      (transA && transB) || maps[2] != map(i, j))
    return mm.emitOpError("has indexing maps the CUDA backend does not "
                          "support (C += A B, A Bᵀ or Aᵀ B)");
  Value a = mm.getInputs()[0], b = mm.getInputs()[1], init = mm.getOutputs()[0];
  auto bt = cast<RankedTensorType>(b.getType());
  Type element = getElementTypeOrSelf(a.getType());
  if (!isGNNFloatType(element) ||
      getElementTypeOrSelf(b.getType()) != element ||
      getElementTypeOrSelf(mm.getResult(0).getType()) != element)
    return mm.emitOpError()
           << "expects operands and result of one float type (f16, bf16, f32 "
              "or f64; bf16 and f16 are computed in f32) for cuBLAS but got "
           << a.getType() << ", " << b.getType() << " and "
           << mm.getResult(0).getType();
  // The sizes but the node or edge count are static: B's (a weight's) for
  // A B and A Bᵀ; for Aᵀ B (both indexed by nodes or edges), the columns.
  auto at = cast<RankedTensorType>(a.getType());
  if (transA ? ShapedType::isDynamic(at.getDimSize(1)) ||
                   ShapedType::isDynamic(bt.getDimSize(1))
             : !bt.hasStaticShape())
    return mm.emitOpError(transA ? "expects static numbers of columns"
                                 : "expects a static right-hand matrix");
  FailureOr<std::string> ab = use(a, mm), bb = use(b, mm);
  // C is m x n, the sum runs over k: Aᵀ B sums over A's rows (nodes or
  // edges for a weight gradient).
  FailureOr<rt::Formula> rowsA = rowsFormula(a);
  if (failed(ab) || failed(bb) || failed(rowsA))
    return failure();
  rt::Formula m = transA ? rt::Formula::constant(at.getDimSize(1)) : *rowsA;
  int64_t n = bt.getDimSize(transB ? 0 : 1);
  rt::Formula kk =
      transA ? *rowsA : rt::Formula::constant(bt.getDimSize(transB ? 1 : 0));
  float beta = 0.0f;
  std::optional<double> fillValue;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    if (auto c = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
      if (auto f = dyn_cast<FloatAttr>(c.getValue()))
        fillValue = f.getValueAsDouble();
  FailureOr<std::string> cb;
  std::string bias;
  auto broadcast = init.getDefiningOp<linalg::GenericOp>();
  bool relu = false;
  if (broadcast && mlir::gnn::isGemmBias(broadcast)) {
    // C = A B + b, the bias added by the GEMM (cuBLASLt's epilogue); C =
    // relu(A B + b) where the result's one reader is a ReLU the epilogue
    // applies (gemmReluOf): the GEMM writes the ReLU's result.
    FailureOr<std::string> vb = use(broadcast.getDpsInputs()[0], mm);
    linalg::GenericOp reluOp = mlir::gnn::reluInEpilogueOf(mm);
    relu = static_cast<bool>(reluOp);
    cb = relu ? define(reluOp->getResult(0), reluOp)
              : define(mm.getResult(0), mm);
    if (failed(vb) || failed(cb))
      return failure();
    bias = *vb;
  } else if (accumulatesInPlace(mm)) {
    // C's buffer is the init's, added into.
    cb = use(init, mm);
    if (failed(cb))
      return failure();
    buffer[mm.getResult(0)] = *cb;
    beta = 1.0f;
  } else {
    cb = define(mm.getResult(0), mm);
    if (failed(cb))
      return failure();
    if (fillValue != 0.0) {
      FailureOr<std::string> ib = use(init, mm);
      FailureOr<rt::Formula> n = size(init, mm);
      if (failed(ib) || failed(n))
        return failure();
      program.steps.push_back(rt::CopyStep{*ib, *cb, *n});
      beta = 1.0f;
    }
  }
  rt::GemmStep gemm{*ab,    *bb,    *cb,  m,   rt::Formula::constant(n), kk,
                    transA, transB, 1.0f, beta};
  gemm.bias = bias;
  gemm.relu = relu;
  if (transA && element.isF32()) {
    // A weight gradient's sum over every node or edge: in double precision,
    // the rows in slices of at least 128 (gemmRowSplit); an f32 GEMM over a
    // million rows misses 1e-4. About 128 blocks of 64 x 64 tiles, at most
    // one per SM on an H100 or H200 (132 SMs): the weight gradients run on a
    // second stream beside the input gradient's chain (placeRowSplitsBeside),
    // whose kernels then keep at least half of each SM's registers (an
    // atbSlices block takes 25-32K of 64K: 196-250 a thread); 256 blocks
    // (two per SM, 51-64K) made GINE's backward (36K rows) 5 % slower. A
    // long gradient needs the second block's loads in flight more: from 512
    // rows a slice on, up to about 256 blocks (at 128, SAGE's backward was
    // 10 % slower on 250K and 1M nodes, with slices of 2K and 8K rows).
    // bench/results/checks-s81/. (Slices of at least 256 rows left a
    // 36K-row gradient 141 blocks, some SMs two of them and most one:
    // bench/probes/atb/chunks.cu.)
    int64_t tiles = (at.getDimSize(1) + 63) / 64 * ((n + 63) / 64);
    auto slices = [&](int64_t rows, int64_t blocks) {
      return rt::Formula::min(
          rt::Formula::ceilDiv(*rowsA, rt::Formula::constant(rows)),
          rt::Formula::constant(std::max<int64_t>(1, blocks / tiles)));
    };
    rt::Formula chunks = rt::Formula::max(
        rt::Formula::max(slices(128, 128), slices(512, 256)),
        rt::Formula::constant(1));
    // A bias gradient beside this weight gradient (a column sum of A):
    // summed by the same kernels, into the slices' partials after C's.
    int64_t sums = 0;
    for (Operation *user : a.getUsers()) {
      auto g = dyn_cast<linalg::GenericOp>(user);
      if (!g || mlir::gnn::gemmRowSumsOf(g) != mm)
        continue;
      FailureOr<std::string> rb = define(g->getResult(0), g);
      if (failed(rb))
        return failure();
      gemm.rowSums = *rb;
      sums = at.getDimSize(1);
      break;
    }
    gemm.partials = "t" + std::to_string(temps++);
    gemm.chunks = chunks;
    declared[gemm.partials] = program.buffers.size();
    program.buffers.push_back(
        {gemm.partials, rt::BufferRole::Temp, rt::DType::F64,
         chunks * rt::Formula::constant(at.getDimSize(1) * n + sums)});
  }
  program.steps.push_back(std::move(gemm));
  return success();
}

Lowering::Access Lowering::access(size_t i) const {
  Access a;
  auto read = [&](const std::string &b) {
    if (!b.empty())
      a.reads.push_back(b);
  };
  auto write = [&](const std::string &b) {
    if (!b.empty())
      a.writes.push_back(b);
  };
  const rt::Step &step = program.steps[i];
  if (auto *l = std::get_if<rt::LaunchStep>(&step)) {
    // Every buffer argument is read; those the launch produces are written
    // (an unknown launch: all of them).
    auto known = launchWrites.find(i);
    for (const rt::KernelArg &arg : l->args)
      if (arg.kind == rt::KernelArg::Kind::Buffer) {
        read(arg.name);
        if (known == launchWrites.end())
          write(arg.name);
      }
    if (known != launchWrites.end())
      for (const std::string &b : known->second)
        write(b);
  } else if (auto *sp = std::get_if<rt::SpmmStep>(&step)) {
    read(sp->input);
    read(sp->weights);
    if (sp->beta != 0)
      read(sp->output);
    write(sp->output);
  } else if (auto *g = std::get_if<rt::GemmStep>(&step)) {
    read(g->a);
    read(g->b);
    read(g->bias);
    if (g->beta != 0)
      read(g->c);
    write(g->c);
    write(g->partials);
    write(g->rowSums);
  } else if (auto *f = std::get_if<rt::FillStep>(&step)) {
    write(f->buffer);
  } else if (auto *c = std::get_if<rt::CopyStep>(&step)) {
    read(c->src);
    write(c->dst);
  }
  return a;
}

void Lowering::placeRowSplitsBeside() {
  // A weight gradient (a row-split Aᵀ B: two kernels of the runtime's own
  // summing over every node or edge) needs only its operands, and nothing
  // after it reads it until the gradients are returned, while the input
  // gradient's chain goes on. Each takes the steps around it that neither
  // write what it reads nor touch what it writes, back to the step its
  // operands come from and on to the first that needs its result (never
  // into a split row kernel's window), and moves after them with
  // `overlaps` their count. Windows may hold other weight gradients: in
  // GINE's backward dW₂, dW₁ and dWₑ all run on the second stream, each
  // started once its operands are there, and the chain waits for them only
  // at the end (Program::overlapWindows). A window that ended at the next
  // weight gradient made the chain wait there for the one before it
  // (bench/results/checks-s81/).
  size_t n = program.steps.size();
  std::vector<Access> acc(n);
  for (size_t i = 0; i < n; ++i)
    acc[i] = access(i);
  auto rowSplit = [&](const rt::Step &s) {
    auto *g = std::get_if<rt::GemmStep>(&s);
    return g && !g->partials.empty();
  };
  // The steps of the split row kernels' windows (launches): no weight
  // gradient's window enters one.
  std::vector<bool> taken(n, false);
  for (const rt::Program::OverlapWindow &w : program.overlapWindows())
    for (size_t k = w.first; k <= w.last; ++k)
      taken[k] = true;
  // Each step's place in the new order (2 i): moved gemms right after their
  // window's last step (2 hi + 1).
  std::vector<std::pair<size_t, size_t>> order;
  for (size_t i = 0; i < n; ++i)
    order.push_back({2 * i, i});
  std::vector<bool> moved(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (!rowSplit(program.steps[i]))
      continue;
    size_t lo = i, hi = i;
    while (lo > 0 && !taken[lo - 1] && !acc[i].clashes(acc[lo - 1]))
      --lo;
    while (hi + 1 < n && !taken[hi + 1] && !acc[i].clashes(acc[hi + 1]))
      ++hi;
    if (lo == hi)
      continue;
    moved[i] = true;
    order[i].first = 2 * hi + 1;
  }
  llvm::stable_sort(order);
  std::vector<rt::Step> steps;
  std::vector<Access> placed;
  std::vector<bool> movedAt, takenAt;
  steps.reserve(n);
  for (auto &[place, i] : order) {
    steps.push_back(std::move(program.steps[i]));
    placed.push_back(std::move(acc[i]));
    movedAt.push_back(moved[i]);
    takenAt.push_back(taken[i]);
  }
  // Each moved gemm's window in the new order: back from its place over the
  // steps it does not clash with (the same steps as before it moved, and
  // the other moved gemms placed among them; a split row kernel's window
  // stays whole, no gemm lands in one).
  for (size_t p = 0; p < n; ++p) {
    if (!movedAt[p])
      continue;
    size_t lo = p;
    while (lo > 0 && !takenAt[lo - 1] && !placed[p].clashes(placed[lo - 1]))
      --lo;
    std::get<rt::GemmStep>(steps[p]).overlaps = static_cast<int64_t>(p - lo);
  }
  program.steps = std::move(steps);
}

/// Follows reshapes (and matmuls adding into their init) back to the value
/// that owns the storage.
static Value storageRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto m = dyn_cast<linalg::MatmulOp>(def); m && accumulatesInPlace(m))
      v = m.getOutputs()[0];
    else if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto c = dyn_cast<tensor::CastOp>(def))
      v = c.getSource();
    else if (auto l = dyn_cast<gnnk::LaunchOp>(def);
             l && l.getTied() &&
             (*l.getTied())[cast<OpResult>(v).getResultNumber()] >= 0)
      v = l.getArgs()[(*l.getTied())[cast<OpResult>(v).getResultNumber()]];
    else
      break;
  }
  return v;
}

/// The smallest relation count of the kernels `func` launches (their
/// gnnk.relations); 0 when none reads edge types.
static int64_t relationCount(func::FuncOp func, ModuleOp module) {
  int64_t fewest = 0;
  func.walk([&](gnnk::LaunchOp launch) {
    auto kernel = module.lookupSymbol<gnnk::KernelOp>(launch.getKernel());
    auto r = kernel ? kernel->getAttrOfType<IntegerAttr>(
                          gnnk::kRelationsAttrName)
                    : IntegerAttr();
    if (r && (!fewest || r.getInt() < fewest))
      fewest = r.getInt();
  });
  return fewest;
}

/// The fewest nodes per graph a kernel `func` launches holds (block-per-graph
/// kernels keep a graph in shared memory); 0 when none has a limit.
static int64_t maxGraphNodes(func::FuncOp func, ModuleOp module) {
  int64_t most = 0;
  func.walk([&](gnnk::LaunchOp launch) {
    auto kernel = module.lookupSymbol<gnnk::KernelOp>(launch.getKernel());
    auto limit =
        kernel
            ? kernel->getAttrOfType<IntegerAttr>(gnnk::kMaxGraphNodesAttrName)
            : IntegerAttr();
    if (limit && (!most || limit.getInt() < most))
      most = limit.getInt();
  });
  return most;
}

FailureOr<rt::Program> Lowering::run() {
  program.name = func.getSymName().str();
  program.indexBits = indexBits;
  program.csrOrderEdges = csrOrderEdges;
  if (func.getBody().getBlocks().size() != 1)
    return func.emitError("expects a function with a single block");
  auto module = func->getParentOfType<ModuleOp>();
  FailureOr<CUDAUnits> source = printKernelUnits(module, indexBits);
  if (failed(source))
    return failure();
  program.prelude = std::move(source->prelude);
  for (CUDAUnits::Kernel &k : source->kernels)
    program.units.push_back(rt::SourceUnit{std::move(k.names), std::move(k.text)});
  program.kernels = {kEdgesToSlots, kSlotsToEdges};
  for (auto kernel : module.getOps<gnnk::KernelOp>())
    program.kernels.push_back(kernel.getSymName().str());
  program.maxGraphNodes = maxGraphNodes(func, module);
  program.relations = relationCount(func, module);
  if (auto counts =
          func->getAttrOfType<DictionaryAttr>(mlir::gnn::kFixedCountsAttrName))
    for (NamedAttribute count : counts)
      if (auto value = dyn_cast<IntegerAttr>(count.getValue()))
        program.fixedCounts[count.getName().str()] = value.getInt();

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  // Values returned are produced straight into their output buffers.
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value root = storageRoot(v);
    if (!isa<BlockArgument>(root) && !reserved.count(root) && !converted(v))
      reserved[root] = i;
  }

  // Inputs; edge tensors are brought into CSR slot order.
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (isa<mlir::gnn::GraphType>(arg.getType()))
      continue;
    if (!isa<RankedTensorType>(arg.getType()))
      return func.emitError() << "argument #" << i << " has type "
                              << arg.getType()
                              << ", which the CUDA backend does not support";
    std::string name = "arg" + std::to_string(i);
    FailureOr<rt::Formula> elements = size(arg, func);
    if (failed(elements) ||
        failed(declare(name, rt::BufferRole::Input, *elements, arg, func,
                       rt::BufferUse::Argument, i)))
      return failure();
    buffer[arg] = name;
    if (converted(arg)) {
      FailureOr<int64_t> width = rowElements(arg, func);
      std::string slots = name + "_slots";
      if (failed(declare(slots, rt::BufferRole::Temp, *elements, arg, func)))
        return failure();
      launchConversion(/*toSlots=*/true, getElementTypeOrSelf(arg.getType()),
                       slots, name, *width);
      buffer[arg] = slots;
    }
  }

  // Live ops: those the results depend on.
  llvm::SetVector<Operation *> live;
  SmallVector<Value> work(ret.getOperands().begin(), ret.getOperands().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || !live.insert(def))
      continue;
    llvm::append_range(work, def->getOperands());
    // A column sum its GEMM's row split computes: that GEMM runs.
    if (auto g = dyn_cast<linalg::GenericOp>(def))
      if (linalg::MatmulOp mm = mlir::gnn::gemmRowSumsOf(g))
        work.push_back(mm->getResult(0));
  }

  for (Operation &op : func.getBody().front()) {
    if (!live.count(&op) || isa<func::ReturnOp>(op))
      continue;
    if (isa<arith::ConstantOp, tensor::DimOp, tensor::EmptyOp, linalg::FillOp>(
            op))
      continue; // sizes are formulas; fills are materialised where read
    // The bias of the GEMMs that read it; a ReLU its GEMM's epilogue
    // applies; a column sum its GEMM's row split computes (lowerMatmul).
    if (auto g = dyn_cast<linalg::GenericOp>(op);
        g && mlir::gnn::runsInAGemm(g))
      continue;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(op)) {
      // Row-major data keeps its layout under any reshape: one buffer.
      FailureOr<std::string> src = use(op.getOperand(0), &op);
      if (failed(src))
        return failure();
      buffer[op.getResult(0)] = *src;
      continue;
    }
    LogicalResult r = failure();
    if (auto mm = dyn_cast<linalg::MatmulOp>(op))
      r = lowerMatmul(mm);
    else if (auto launch = dyn_cast<gnnk::LaunchOp>(op))
      r = lowerLaunch(launch);
    else
      return op.emitOpError("is not supported by the CUDA backend (expected "
                            "gnnk.launch, linalg.matmul, fills and reshapes "
                            "after gnn-cuda-pipeline)");
    if (failed(r))
      return failure();
  }

  // Outputs that are not produced in place: copies and edge-order conversion.
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    std::string name = "result" + std::to_string(i);
    if (declared.count(name))
      continue;
    // One at a time: both would report a value they cannot size.
    FailureOr<std::string> src = use(v, ret);
    if (failed(src))
      return failure();
    // Using it may have produced it into its reserved output (a fill).
    if (declared.count(name))
      continue;
    FailureOr<rt::Formula> elements = size(v, ret);
    if (failed(elements) ||
        failed(declare(name, rt::BufferRole::Output, *elements, v, ret,
                       rt::BufferUse::Result, i)))
      return failure();
    if (converted(v)) {
      FailureOr<int64_t> width = rowElements(v, ret);
      if (failed(width))
        return failure();
      launchConversion(/*toSlots=*/false, getElementTypeOrSelf(v.getType()),
                       name, *src, *width);
    } else {
      program.steps.push_back(rt::CopyStep{*src, name, *elements});
    }
  }
  // Outputs were declared as their producers came; list them in result
  // order, where they were (consumers read them in that order).
  std::vector<size_t> slots;
  std::vector<rt::BufferDecl> outputs;
  for (auto [i, d] : llvm::enumerate(program.buffers))
    if (d.role == rt::BufferRole::Output) {
      slots.push_back(i);
      outputs.push_back(d);
    }
  llvm::stable_sort(outputs,
                    [&](const rt::BufferDecl &a, const rt::BufferDecl &b) {
                      return a.index < b.index;
                    });
  for (auto [slot, d] : llvm::zip_equal(slots, outputs))
    program.buffers[slot] = d;
  // The other types' conversion kernels used, after the f32 ones, in the
  // prelude's order.
  std::vector<std::string> used;
  for (const char *k : {kEdgesToSlotsF64, kSlotsToEdgesF64, kEdgesToSlotsBF16,
                        kSlotsToEdgesBF16, kEdgesToSlotsF16, kSlotsToEdgesF16})
    if (conversions.contains(k))
      used.push_back(k);
  program.kernels.insert(program.kernels.begin() + 2, used.begin(), used.end());
  placeRowSplitsBeside();
  rt::Status s = program.verify();
  if (!s.ok())
    return func.emitError() << "generated an invalid program: " << s.message();
  return program;
}

LogicalResult mlir::gnn::checkOneGraph(func::FuncOp func) {
  SmallVector<BlockArgument> graphs;
  if (!func.isExternal())
    for (BlockArgument arg : func.getArguments())
      if (isa<mlir::gnn::GraphType>(arg.getType()))
        graphs.push_back(arg);
  if (graphs.size() <= 1)
    return success();
  InFlightDiagnostic diag =
      func.emitError() << "expects exactly one !gnn.graph argument but got "
                       << graphs.size()
                       << " (the CUDA backend runs a function on one graph)";
  diag.attachNote(graphs[1].getLoc())
      << "argument #" << graphs[1].getArgNumber() << " is another graph";
  return diag;
}

FailureOr<rt::Program> mlir::gnn::buildProgram(func::FuncOp func,
                                               int indexBits,
                                               bool csrOrderEdges) {
  if (indexBits != 32 && indexBits != 64)
    return func.emitError() << "expects 32- or 64-bit graph indices but got "
                            << indexBits;
  if (failed(checkOneGraph(func)))
    return failure();
  return Lowering(func, indexBits, csrOrderEdges).run();
}
