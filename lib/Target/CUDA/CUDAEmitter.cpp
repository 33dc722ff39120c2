//===- CUDAEmitter.cpp - CUDA kernels from kernel groups ------------------===//
//
// Part of gnnc. One kernel per kernel group: the group's anchor (a graph op or
// a linalg op) decides the loop structure, its absorbed elementwise consumers
// are applied to each value before it is stored, and scalar bodies are emitted
// by walking their arith/math ops.
//
//===----------------------------------------------------------------------===//

#include "gnn/Target/CUDA/CUDAEmitter.h"
#include "CUDAWriter.h"

#include "gnn/Dialect/GNN/IR/GNNDomain.h"
#include "gnn/Dialect/GNN/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

FailureOr<int64_t> mlir::gnn::rowElements(Value value, Operation *where) {
  auto t = dyn_cast<RankedTensorType>(value.getType());
  if (!t || t.getRank() < 1)
    return where->emitOpError("expects ranked tensors of rank >= 1 in the "
                              "CUDA backend");
  int64_t n = 1;
  for (int64_t d : t.getShape().drop_front()) {
    if (ShapedType::isDynamic(d))
      return where->emitOpError() << "has a tensor " << t
                                  << " with a dynamic non-leading dimension, "
                                     "which the CUDA backend does not support";
    n *= d;
  }
  return n;
}

/// The row count of a value whose leading dimension may be dynamic.
FailureOr<std::string> mlir::gnn::rowsFormula(Value value) {
  auto t = cast<RankedTensorType>(value.getType());
  if (!ShapedType::isDynamic(t.getDimSize(0)))
    return std::to_string(t.getDimSize(0));
  Domain d = inferDomain(value);
  if (d == Domain::Node)
    return std::string("nodes");
  if (d == Domain::Edge)
    return std::string("edges");
  // tensor.empty(tensor.dim %v, 0) and fills of it have %v's rows.
  Operation *def = value.getDefiningOp();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(def))
    return rowsFormula(fill.getOutputs()[0]);
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def)) {
    if (auto dim = empty.getDynamicSizes()[0].getDefiningOp<tensor::DimOp>())
      return rowsFormula(dim.getSource());
  }
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return std::string("nodes");
  InFlightDiagnostic diag =
      def ? def->emitOpError() : emitError(value.getLoc());
  diag << "produces a tensor whose leading dimension cannot be told to count "
          "nodes or edges";
  return failure();
}

//===----------------------------------------------------------------------===//
// Kernel builder
//===----------------------------------------------------------------------===//

namespace {

std::string floatLiteral(double v) {
  if (std::isnan(v))
    return "__int_as_float(0x7fc00000)";
  if (std::isinf(v))
    return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  std::string s = llvm::formatv("{0:e9}", v).str();
  return s + "f";
}

/// C type of a scalar in a body, or empty if unsupported.
std::string cType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isInteger(1))
    return "bool";
  if (t.isIndex() || t.isInteger(32) || t.isInteger(64))
    return "long long";
  return "";
}

/// Collects the parameters of one kernel while its body is written.
class KernelBuilder {
public:
  KernelBuilder(KernelGroupOp group, const EmitOptions &options)
      : group(group), options(options) {}

  /// The parameter holding tensor `v` (read).
  std::string input(Value v) {
    for (auto [i, p] : llvm::enumerate(spec.params))
      if (p.kind == KernelParam::Kind::Input && p.value == v)
        return names[i];
    return add({KernelParam::Kind::Input, v, "", ""},
               "in" + std::to_string(inputs++));
  }
  std::string graph(StringRef array) {
    for (auto [i, p] : llvm::enumerate(spec.params))
      if (p.kind == KernelParam::Kind::GraphArray && p.graphArray == array)
        return names[i];
    return add({KernelParam::Kind::GraphArray, Value(), array.str(), ""},
               array.str());
  }
  std::string output(unsigned i) {
    std::string name = "out" + std::to_string(i);
    for (auto [j, p] : llvm::enumerate(spec.params))
      if (p.kind == KernelParam::Kind::Output && names[j] == name)
        return name;
    return add({KernelParam::Kind::Output, group->getResult(i), "", ""}, name);
  }
  std::string rows(const std::string &formula) {
    return add({KernelParam::Kind::Rows, Value(), "", formula}, "rows");
  }
  std::string scratch(const std::string &name, const std::string &floats) {
    KernelParam p{KernelParam::Kind::Scratch, Value(), "", floats};
    p.scratch = name;
    return add(p, name);
  }
  std::string fresh(StringRef prefix) {
    return (prefix + std::to_string(counter++)).str();
  }

  /// `buffer[offset]` of tensor `operand` at loop indices `idx` through `map`.
  FailureOr<std::string> access(Value operand, AffineMap map,
                                ArrayRef<std::string> idx, Operation *where);

  /// Emits the ops of a linalg body; `args` are the C expressions of its block
  /// arguments; fills `yields`.
  LogicalResult scalarBody(Block &block, ArrayRef<std::string> args,
                           SmallVectorImpl<std::string> &yields,
                           ArrayRef<std::string> loopIdx);

  /// Applies the absorbed consumers to `value`, the anchor's element at row
  /// `row`, flat position `k` within the row; returns the final expression.
  FailureOr<std::string> epilogue(const std::string &value,
                                  const std::string &row, const std::string &k);

  KernelGroupOp group;
  const EmitOptions &options;
  KernelSpec spec;
  std::vector<std::string> names;
  CUDAWriter body;
  /// Consumers after the anchor, in order.
  SmallVector<linalg::GenericOp> chain;

private:
  std::string add(KernelParam p, std::string name) {
    spec.params.push_back(std::move(p));
    names.push_back(name);
    return name;
  }
  int inputs = 0, counter = 0;
};

} // namespace

FailureOr<std::string> KernelBuilder::access(Value operand, AffineMap map,
                                             ArrayRef<std::string> idx,
                                             Operation *where) {
  auto t = cast<RankedTensorType>(operand.getType());
  if (static_cast<int64_t>(map.getNumResults()) != t.getRank())
    return where->emitOpError("has an indexing map that does not match its "
                              "operand's rank");
  std::string offset;
  int64_t stride = 1;
  for (int64_t r = t.getRank() - 1; r >= 0; --r) {
    AffineExpr e = map.getResult(r);
    std::string term;
    if (auto d = dyn_cast<AffineDimExpr>(e))
      term = idx[d.getPosition()];
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      term = std::to_string(c.getValue());
    else
      return where->emitOpError("has an indexing map the CUDA backend does "
                                "not support (only dimensions and constants)");
    std::string scaled =
        stride == 1 ? term : "(" + term + ") * " + std::to_string(stride) + "LL";
    offset = offset.empty() ? scaled : scaled + " + " + offset;
    if (r > 0) {
      if (ShapedType::isDynamic(t.getDimSize(r)))
        return where->emitOpError("has a dynamic non-leading dimension");
      stride *= t.getDimSize(r);
    }
  }
  return input(operand) + "[" + (offset.empty() ? "0" : offset) + "]";
}

/// C text of a float comparison with MLIR's ordered/unordered semantics.
static std::string compare(arith::CmpFPredicate p, const std::string &a,
                           const std::string &b) {
  using P = arith::CmpFPredicate;
  std::string unordered = "(isnan(" + a + ") || isnan(" + b + "))";
  switch (p) {
  case P::AlwaysFalse: return "false";
  case P::AlwaysTrue: return "true";
  case P::OEQ: return "(" + a + " == " + b + ")";
  case P::OGT: return "(" + a + " > " + b + ")";
  case P::OGE: return "(" + a + " >= " + b + ")";
  case P::OLT: return "(" + a + " < " + b + ")";
  case P::OLE: return "(" + a + " <= " + b + ")";
  case P::ONE: return "(" + a + " < " + b + " || " + a + " > " + b + ")";
  case P::ORD: return "!" + unordered;
  case P::UEQ: return "!(" + a + " < " + b + " || " + a + " > " + b + ")";
  case P::UGT: return "!(" + a + " <= " + b + ")";
  case P::UGE: return "!(" + a + " < " + b + ")";
  case P::ULT: return "!(" + a + " >= " + b + ")";
  case P::ULE: return "!(" + a + " > " + b + ")";
  case P::UNE: return "!(" + a + " == " + b + ")";
  case P::UNO: return unordered;
  }
  return "false";
}

static std::string compareInt(arith::CmpIPredicate p, const std::string &a,
                              const std::string &b) {
  using P = arith::CmpIPredicate;
  const char *op = "==";
  switch (p) {
  case P::eq: op = "=="; break;
  case P::ne: op = "!="; break;
  case P::slt: case P::ult: op = "<"; break;
  case P::sle: case P::ule: op = "<="; break;
  case P::sgt: case P::ugt: op = ">"; break;
  case P::sge: case P::uge: op = ">="; break;
  }
  return "(" + a + " " + op + " " + b + ")";
}

LogicalResult KernelBuilder::scalarBody(Block &block, ArrayRef<std::string> args,
                                        SmallVectorImpl<std::string> &yields,
                                        ArrayRef<std::string> loopIdx) {
  llvm::DenseMap<Value, std::string> expr;
  for (auto [arg, text] : llvm::zip(block.getArguments(), args))
    expr[arg] = text;
  auto get = [&](Value v) -> FailureOr<std::string> {
    auto it = expr.find(v);
    if (it != expr.end())
      return it->second;
    // A constant defined outside the body.
    if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
      if (auto f = dyn_cast<FloatAttr>(c.getValue()))
        return floatLiteral(f.getValueAsDouble());
      if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
        return std::to_string(i.getValue().getSExtValue()) + "LL";
    }
    Operation *def = v.getDefiningOp();
    return (def ? def->emitOpError() : emitError(v.getLoc()))
           << "is used inside a kernel body but is not a constant; the CUDA "
              "backend supports only constants from outside a body";
  };
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Value v : op.getOperands()) {
        FailureOr<std::string> e = get(v);
        if (failed(e))
          return failure();
        yields.push_back(*e);
      }
      return success();
    }
    if (op.getNumResults() != 1)
      return op.emitOpError("is not supported by the CUDA backend");
    std::string type = cType(op.getResult(0).getType());
    if (type.empty())
      return op.emitOpError() << "produces " << op.getResult(0).getType()
                              << ", which the CUDA backend does not support "
                                 "(only f32, i1 and integer indices)";
    SmallVector<std::string> in;
    for (Value v : op.getOperands()) {
      FailureOr<std::string> e = get(v);
      if (failed(e))
        return failure();
      in.push_back(*e);
    }
    auto un = [&](const char *fn) { return std::string(fn) + "(" + in[0] + ")"; };
    auto bin = [&](const char *o) { return "(" + in[0] + " " + o + " " + in[1] + ")"; };
    auto call2 = [&](const char *fn) {
      return std::string(fn) + "(" + in[0] + ", " + in[1] + ")";
    };
    std::string text;
    bool ok = true;
    llvm::TypeSwitch<Operation *>(&op)
        .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
          if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            text = floatLiteral(f.getValueAsDouble());
          else if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
            text = i.getType().isInteger(1)
                       ? (i.getValue().getBoolValue() ? "true" : "false")
                       : std::to_string(i.getValue().getSExtValue()) + "LL";
          else
            ok = false;
        })
        .Case<arith::AddFOp, arith::AddIOp>([&](auto) { text = bin("+"); })
        .Case<arith::SubFOp, arith::SubIOp>([&](auto) { text = bin("-"); })
        .Case<arith::MulFOp, arith::MulIOp>([&](auto) { text = bin("*"); })
        .Case<arith::DivFOp, arith::DivSIOp>([&](auto) { text = bin("/"); })
        .Case<arith::RemFOp>([&](auto) { text = call2("fmodf"); })
        .Case<arith::RemSIOp>([&](auto) { text = bin("%"); })
        .Case<arith::NegFOp>([&](auto) { text = "(-" + in[0] + ")"; })
        .Case<arith::MaximumFOp>([&](auto) { text = call2("gnn_maximumf"); })
        .Case<arith::MinimumFOp>([&](auto) { text = call2("gnn_minimumf"); })
        .Case<arith::MaxNumFOp>([&](auto) { text = call2("fmaxf"); })
        .Case<arith::MinNumFOp>([&](auto) { text = call2("fminf"); })
        .Case<arith::MaxSIOp>([&](auto) { text = call2("max"); })
        .Case<arith::MinSIOp>([&](auto) { text = call2("min"); })
        .Case<arith::CmpFOp>([&](arith::CmpFOp c) {
          text = compare(c.getPredicate(), in[0], in[1]);
        })
        .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
          text = compareInt(c.getPredicate(), in[0], in[1]);
        })
        .Case<arith::SelectOp>([&](auto) {
          text = "(" + in[0] + " ? " + in[1] + " : " + in[2] + ")";
        })
        .Case<arith::AndIOp>([&](auto) { text = bin("&&"); })
        .Case<arith::OrIOp>([&](auto) { text = bin("||"); })
        .Case<arith::XOrIOp>([&](auto) { text = bin("!="); })
        .Case<arith::ExtFOp, arith::TruncFOp, arith::IndexCastOp, arith::ExtSIOp>(
            [&](auto) { text = in[0]; })
        .Case<arith::SIToFPOp>([&](auto) { text = "(float)(" + in[0] + ")"; })
        .Case<arith::FPToSIOp>([&](auto) { text = "(long long)(" + in[0] + ")"; })
        .Case<math::ExpOp>([&](auto) { text = un("expf"); })
        .Case<math::Exp2Op>([&](auto) { text = un("exp2f"); })
        .Case<math::LogOp>([&](auto) { text = un("logf"); })
        .Case<math::Log2Op>([&](auto) { text = un("log2f"); })
        .Case<math::Log1pOp>([&](auto) { text = un("log1pf"); })
        .Case<math::ExpM1Op>([&](auto) { text = un("expm1f"); })
        .Case<math::TanhOp>([&](auto) { text = un("tanhf"); })
        .Case<math::SqrtOp>([&](auto) { text = un("sqrtf"); })
        .Case<math::RsqrtOp>([&](auto) { text = un("rsqrtf"); })
        .Case<math::PowFOp>([&](auto) { text = call2("powf"); })
        .Case<math::AbsFOp>([&](auto) { text = un("fabsf"); })
        .Case<math::ErfOp>([&](auto) { text = un("erff"); })
        .Case<math::SinOp>([&](auto) { text = un("sinf"); })
        .Case<math::CosOp>([&](auto) { text = un("cosf"); })
        .Case<math::FloorOp>([&](auto) { text = un("floorf"); })
        .Case<math::CeilOp>([&](auto) { text = un("ceilf"); })
        .Case<math::FmaOp>([&](auto) {
          text = "fmaf(" + in[0] + ", " + in[1] + ", " + in[2] + ")";
        })
        .Case<linalg::IndexOp>([&](linalg::IndexOp i) {
          if (i.getDim() < loopIdx.size())
            text = loopIdx[i.getDim()];
          else
            ok = false;
        })
        .Default([&](Operation *) { ok = false; });
    if (!ok)
      return op.emitOpError("is not supported by the CUDA backend");
    std::string var = fresh("v");
    body.line("const " + type + " " + var + " = " + text + ";");
    expr[op.getResult(0)] = var;
  }
  return success();
}

FailureOr<std::string> KernelBuilder::epilogue(const std::string &value,
                                               const std::string &row,
                                               const std::string &k) {
  std::string current = value;
  Value previous = group.getBody().front().front().getResult(0);
  for (linalg::GenericOp consumer : chain) {
    auto type = cast<RankedTensorType>(consumer->getResult(0).getType());
    // Loop indices of this element: d0 = row, the others from k.
    SmallVector<std::string> idx = {row};
    int64_t stride = 1;
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (int64_t d = type.getRank() - 1; d >= 1; --d) {
      strides[d] = stride;
      stride *= type.getDimSize(d);
    }
    for (int64_t d = 1; d < type.getRank(); ++d) {
      std::string name = fresh("e");
      body.line(llvm::formatv("const long long {0} = ({1} / {2}LL) % {3}LL;",
                              name, k, strides[d], type.getDimSize(d))
                    .str());
      idx.push_back(name);
    }
    SmallVector<std::string> args;
    for (OpOperand *in : consumer.getDpsInputOperands()) {
      if (in->get() == previous) {
        args.push_back(current);
        continue;
      }
      if (!isa<RankedTensorType>(in->get().getType())) {
        FailureOr<std::string> scalar = failure();
        if (auto c = in->get().getDefiningOp<arith::ConstantOp>())
          if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            scalar = floatLiteral(f.getValueAsDouble());
        if (failed(scalar))
          return consumer.emitOpError("has a scalar operand that is not a "
                                      "constant");
        args.push_back(*scalar);
        continue;
      }
      FailureOr<std::string> a = access(
          in->get(), consumer.getMatchingIndexingMap(in), idx, consumer);
      if (failed(a))
        return failure();
      args.push_back(*a);
    }
    args.push_back("0.0f"); // the init, never read (checked when absorbed)
    SmallVector<std::string> yields;
    if (failed(scalarBody(consumer.getRegion().front(), args, yields, idx)))
      return failure();
    current = yields[0];
    previous = consumer->getResult(0);
  }
  return current;
}

//===----------------------------------------------------------------------===//
// Kernels per group kind
//===----------------------------------------------------------------------===//

namespace {

/// Team reductions over `lanes` consecutive lanes of a warp.
std::string teamReduce(const std::string &fn, const std::string &v, int64_t lanes) {
  if (lanes == 1)
    return "";
  return llvm::formatv("for (int o = {0} / 2; o > 0; o >>= 1) {1} = {2}({1}, "
                       "__shfl_xor_sync(0xffffffffu, {1}, o, {0}));",
                       lanes, v, fn)
      .str();
}

/// The thread index and the early exit for element- and edge-parallel kernels.
void threadPrologue(CUDAWriter &w, const std::string &total) {
  w.line("const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;");
  w.line("if (t >= " + total + ") return;");
}

LogicalResult checkF32(Operation *op) {
  for (Type t : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      if (!tensor.getElementType().isF32())
        return op->emitOpError() << "uses " << t
                                 << "; the CUDA backend supports only f32 "
                                    "tensors";
  return success();
}

} // namespace

/// Degree: a thread per node.
static LogicalResult emitDegree(KernelBuilder &b, DegreeOp op) {
  std::string rows = b.rows("nodes");
  CUDAWriter &w = b.body;
  threadPrologue(w, rows);
  std::string ptr = b.graph(op.getReversed() ? "csc_col_ptr" : "csr_row_ptr");
  w.line("const float d = (float)(" + ptr + "[t + 1] - " + ptr + "[t]);");
  FailureOr<std::string> v = b.epilogue("d", "t", "0LL");
  if (failed(v))
    return failure();
  w.line(b.output(0) + "[t] = " + *v + ";");
  b.spec.threads = "nodes";
  return success();
}

/// Gather: a thread per edge element, edges in CSR slot order.
static LogicalResult emitGather(KernelBuilder &b, GatherOp op) {
  FailureOr<int64_t> row = rowElements(op.getInput(), op);
  if (failed(row))
    return failure();
  std::string rows = b.rows("edges");
  CUDAWriter &w = b.body;
  threadPrologue(w, rows + " * " + std::to_string(*row) + "LL");
  w.line(llvm::formatv("const long long i = t / {0}LL, k = t % {0}LL;", *row).str());
  std::string end = b.graph(op.getEnd() == EdgeEnd::src ? "csr_col" : "csr_dst");
  w.line("const long long node = " + end + "[i];");
  w.line(llvm::formatv("const float x = {0}[node * {1}LL + k];",
                       b.input(op.getInput()), *row)
             .str());
  FailureOr<std::string> v = b.epilogue("x", "i", "k");
  if (failed(v))
    return failure();
  w.line(llvm::formatv("{0}[i * {1}LL + k] = {2};", b.output(0), *row, *v).str());
  b.spec.threads = "edges * " + std::to_string(*row);
  return success();
}

/// SDDMM: a thread per element of the edge result, edges in CSR slot order.
static LogicalResult emitSddmm(KernelBuilder &b, SddmmOp op) {
  FailureOr<int64_t> inRow = rowElements(op.getLhs(), op);
  FailureOr<int64_t> outRow = rowElements(op.getResult(), op);
  if (failed(inRow) || failed(outRow))
    return failure();
  std::string rows = b.rows("edges");
  CUDAWriter &w = b.body;
  threadPrologue(w, rows + " * " + std::to_string(*outRow) + "LL");
  w.line(llvm::formatv("const long long i = t / {0}LL, k = t % {0}LL;", *outRow).str());
  std::string src = b.graph("csr_col"), dst = b.graph("csr_dst");
  w.line("const long long s = " + src + "[i], d = " + dst + "[i];");
  // reversed: lhs is read at the destination, rhs at the source.
  std::string a = op.getReversed() ? "d" : "s", c = op.getReversed() ? "s" : "d";
  std::string lhs = b.input(op.getLhs()), rhs = b.input(op.getRhs());
  if (op.getKind() == SddmmKind::dot) {
    int64_t f = *inRow / *outRow;
    w.line("float acc = 0.0f;");
    w.line(llvm::formatv("const float *pa = {0} + {1} * {2}LL + k * {3}LL;", lhs,
                         a, *inRow, f)
               .str());
    w.line(llvm::formatv("const float *pb = {0} + {1} * {2}LL + k * {3}LL;", rhs,
                         c, *inRow, f)
               .str());
    w.line(llvm::formatv("#pragma unroll {0}", std::min<int64_t>(f, 16)).str());
    w.line(llvm::formatv("for (int f = 0; f < {0}; ++f) acc = fmaf(pa[f], pb[f], acc);", f).str());
  } else {
    const char *o = op.getKind() == SddmmKind::add   ? "+"
                    : op.getKind() == SddmmKind::sub ? "-"
                                                     : "*";
    w.line(llvm::formatv("const float acc = {0}[{1} * {2}LL + k] {3} {4}[{5} * {2}LL + k];",
                         lhs, a, *inRow, o, rhs, c)
               .str());
  }
  FailureOr<std::string> v = b.epilogue("acc", "i", "k");
  if (failed(v))
    return failure();
  w.line(llvm::formatv("{0}[i * {1}LL + k] = {2};", b.output(0), *outRow, *v).str());
  b.spec.threads = "edges * " + std::to_string(*outRow);
  return success();
}

/// The edge range of row `r` and the CSR slot of position `j` in it.
static void rowRange(KernelBuilder &b, bool reversed, std::string &slotOf) {
  CUDAWriter &w = b.body;
  std::string ptr = b.graph(reversed ? "csc_col_ptr" : "csr_row_ptr");
  w.line("const long long begin = valid ? (long long)" + ptr + "[r] : 0LL;");
  w.line("const long long end = valid ? (long long)" + ptr + "[r + 1] : 0LL;");
  slotOf = reversed ? "(long long)" + b.graph("csc_to_csr") + "[j]" : "j";
}

/// The team prologue of row-parallel kernels.
static void teamPrologue(KernelBuilder &b, int64_t lanes, const std::string &rows) {
  CUDAWriter &w = b.body;
  w.line("const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;");
  w.line(llvm::formatv("const long long r = t / {0}LL;", lanes).str());
  w.line(llvm::formatv("const int lane = (int)(t % {0}LL);", lanes).str());
  w.line("const bool valid = r < " + rows + ";");
}

/// Edge softmax: a team of lanes per row, the lanes over the row's edges.
static LogicalResult emitEdgeSoftmax(KernelBuilder &b, EdgeSoftmaxOp op,
                                     ScheduleAttr s) {
  FailureOr<int64_t> row = rowElements(op.getInput(), op);
  if (failed(row))
    return failure();
  int64_t lanes = s.getLanes();
  std::string rows = b.rows("nodes");
  CUDAWriter &w = b.body;
  teamPrologue(b, lanes, rows);
  std::string slotOf;
  rowRange(b, op.getReversed(), slotOf);
  std::string x = b.input(op.getInput());
  std::string out = b.output(0);
  w.open(llvm::formatv("for (int h = 0; h < {0}; ++h)", *row).str());
  w.line("float m = -__int_as_float(0x7f800000);");
  w.open("for (long long j = begin + lane; j < end; j += " + std::to_string(lanes) + ")");
  w.line(llvm::formatv("m = fmaxf(m, {0}[{1} * {2}LL + h]);", x, slotOf, *row).str());
  w.close();
  w.line(teamReduce("fmaxf", "m", lanes));
  w.line("double sum = 0.0;");
  w.line("const bool mass = m != -__int_as_float(0x7f800000);");
  w.open("for (long long j = begin + lane; j < end; j += " + std::to_string(lanes) + ")");
  w.line(llvm::formatv("sum += mass ? (double)expf({0}[{1} * {2}LL + h] - m) : 0.0;",
                       x, slotOf, *row)
             .str());
  w.close();
  w.line(teamReduce("gnn_add", "sum", lanes));
  w.line("const float inv = (float)(1.0 / sum);");
  w.open("for (long long j = begin + lane; j < end; j += " + std::to_string(lanes) + ")");
  w.line("const long long slot = " + slotOf + ";");
  w.line(llvm::formatv("const float p = mass ? expf({0}[slot * {1}LL + h] - m) * inv : 0.0f;",
                       x, *row)
             .str());
  FailureOr<std::string> v = b.epilogue("p", "slot", "(long long)h");
  if (failed(v))
    return failure();
  w.line(llvm::formatv("{0}[slot * {1}LL + h] = {2};", out, *row, *v).str());
  w.close();
  w.close();
  b.spec.threads = "nodes * " + std::to_string(lanes);
  return success();
}

namespace {

/// Emission of spmm and reduce. A team of lanes per destination row: `fl`
/// lanes cover the row's features (`vector` consecutive floats each), the
/// team's other lanes form edge groups taking other edges of the same row, and
/// the edge loop is unrolled so several rows are loaded at once; groups combine
/// by shuffle, sums accumulate in double. With a split, rows of more than
/// `split` edges are left to a partial kernel (a block per chunk of `split`
/// edges, writing per-chunk partial results) and a final kernel (combining
/// the chunks of each heavy row in order, then the epilogue).
class Aggregation {
public:
  Aggregation(Operation *op, ScheduleAttr s) : op(op), s(s) {
    spmm = dyn_cast<SpmmOp>(op);
    auto reduce = dyn_cast<ReduceOp>(op);
    input = spmm ? spmm.getInput() : reduce.getInput();
    reversed = spmm ? spmm.getReversed() : reduce.getReversed();
    kind = spmm ? spmm.getReduce() : reduce.getKind();
    extremum = kind == ReduceKind::max || kind == ReduceKind::min;
  }

  LogicalResult check() {
    FailureOr<int64_t> r = rowElements(input, op);
    if (failed(r))
      return failure();
    row = *r;
    vec = s.getVector();
    lanes = s.getLanes();
    if (row % vec)
      return op->emitOpError() << "has rows of " << row
                               << " elements, not a multiple of the "
                                  "schedule's vector width "
                               << vec;
    fl = 1;
    while (fl < lanes && fl * vec < row)
      fl <<= 1;
    groups = lanes / fl;
    f = cast<RankedTensorType>(input.getType()).getShape().back();
    return success();
  }

  LogicalResult emitMain(KernelBuilder &b);
  LogicalResult emitPartial(KernelBuilder &b);
  LogicalResult emitFinal(KernelBuilder &b);

  std::string partialsSize() const {
    return "ceil_div(edges, " + std::to_string(s.getSplit()) + ") * " +
           std::to_string(2 * row);
  }

private:
  /// Declares the graph and input parameters used by the edge loop.
  void bindInputs(KernelBuilder &b) {
    x = b.input(input);
    weights = spmm && spmm.getWeights() ? b.input(spmm.getWeights()) : "";
    colArray = spmm ? b.graph(reversed ? "csc_row" : "csr_col") : "";
    slotArray = reversed ? b.graph("csc_to_csr") : "";
  }
  std::string slotExpr(const std::string &j) const {
    return reversed ? "(long long)" + slotArray + "[" + j + "]" : j;
  }
  std::string baseExpr(const std::string &slot, const std::string &j) const {
    std::string who = spmm ? "(long long)" + colArray + "[" + j + "]" : slot;
    return who + " * " + std::to_string(row) + "LL + c";
  }
  std::string weightExpr(const std::string &slot, int64_t v) const {
    return llvm::formatv("{0}[{1} * {2}LL + (c + {3}) / {4}]", weights, slot,
                         row / f, v, f)
        .str();
  }
  std::string combine(const std::string &acc, const std::string &v,
                      const std::string &wt) const {
    const char *ext = kind == ReduceKind::max ? "fmaxf" : "fminf";
    std::string term = wt.empty() ? v : wt + " * " + v;
    if (extremum)
      return std::string(ext) + "(" + acc + ", " + term + ")";
    return wt.empty() ? acc + " + (double)" + v
                      : "fma((double)" + wt + ", (double)" + v + ", " + acc + ")";
  }
  std::string merge(const std::string &a, const std::string &b) const {
    if (extremum)
      return std::string(kind == ReduceKind::max ? "fmaxf" : "fminf") + "(" + a +
             ", " + b + ")";
    return a + " + " + b;
  }
  std::string accType() const { return extremum ? "float" : "double"; }
  std::string init() const {
    return kind == ReduceKind::max   ? "-__int_as_float(0x7f800000)"
           : kind == ReduceKind::min ? "__int_as_float(0x7f800000)"
                                     : "0.0";
  }
  void loadRow(CUDAWriter &w, const std::string &dst,
               const std::string &base) const {
    if (vec == 4)
      w.line("{ const float4 q = gnn::load4(" + x + " + " + base + "); " + dst +
             "[0] = q.x; " + dst + "[1] = q.y; " + dst + "[2] = q.z; " + dst +
             "[3] = q.w; }");
    else if (vec == 2)
      w.line("{ const float2 q = __ldg(reinterpret_cast<const float2 *>(" + x +
             " + " + base + ")); " + dst + "[0] = q.x; " + dst + "[1] = q.y; }");
    else
      w.line(dst + "[0] = __ldg(" + x + " + " + base + ");");
  }
  /// acc[] over positions first, first + stride, ... < last (features c..).
  void accumulate(CUDAWriter &w, const std::string &first,
                  const std::string &last, int64_t stride) const {
    constexpr int64_t unroll = 4;
    w.line("long long j = " + first + ";");
    w.open(llvm::formatv("for (; j + {0} < {1}; j += {2})", (unroll - 1) * stride,
                         last, unroll * stride)
               .str());
    w.line(llvm::formatv("float val[{0}][{1}];", unroll, vec).str());
    for (int64_t u = 0; u < unroll; ++u) {
      std::string ju = u ? llvm::formatv("j + {0}", u * stride).str() : "j";
      w.line(llvm::formatv("const long long slot{0} = {1};", u, slotExpr(ju)).str());
      loadRow(w, llvm::formatv("val[{0}]", u).str(),
              baseExpr(llvm::formatv("slot{0}", u).str(), ju));
    }
    for (int64_t u = 0; u < unroll; ++u)
      for (int64_t v = 0; v < vec; ++v) {
        std::string acc = llvm::formatv("acc[{0}]", v).str();
        std::string wt = weights.empty()
                             ? ""
                             : weightExpr(llvm::formatv("slot{0}", u).str(), v);
        w.line(acc + " = " + combine(acc, llvm::formatv("val[{0}][{1}]", u, v).str(), wt) + ";");
      }
    w.close();
    w.open(llvm::formatv("for (; j < {0}; j += {1})", last, stride).str());
    w.line(llvm::formatv("float val[1][{0}];", vec).str());
    w.line("const long long slot0 = " + slotExpr("j") + ";");
    loadRow(w, "val[0]", baseExpr("slot0", "j"));
    for (int64_t v = 0; v < vec; ++v) {
      std::string acc = llvm::formatv("acc[{0}]", v).str();
      std::string wt = weights.empty() ? "" : weightExpr("slot0", v);
      w.line(acc + " = " + combine(acc, llvm::formatv("val[0][{0}]", v).str(), wt) + ";");
    }
    w.close();
  }
  /// Opens the loop over feature chunks (closed by the caller) and reduces
  /// positions first, first + stride, ... < last into acc[] for this lane's
  /// features, combining the edge groups with shuffles under `mask`.
  void reduceChunk(CUDAWriter &w, const std::string &first,
                   const std::string &last, int64_t stride,
                   const std::string &mask) const {
    w.open(llvm::formatv("for (long long c0 = 0; c0 < {0}; c0 += {1})", row,
                         fl * vec)
               .str());
    w.line(llvm::formatv("const long long c = c0 + (long long)fl * {0};", vec).str());
    w.line(llvm::formatv("const bool active = c < {0};", row).str());
    w.line(llvm::formatv("{0} acc[{1}];", accType(), vec).str());
    for (int64_t v = 0; v < vec; ++v)
      w.line(llvm::formatv("acc[{0}] = {1};", v, init()).str());
    w.open("if (active)");
    accumulate(w, first, last, stride);
    w.close();
    if (groups == 1)
      return;
    for (int64_t v = 0; v < vec; ++v) {
      std::string acc = llvm::formatv("acc[{0}]", v).str();
      std::string other =
          llvm::formatv("__shfl_xor_sync({0}, {1}, o, {2})", mask, acc, lanes).str();
      w.line(llvm::formatv("for (int o = {0}; o < {1}; o <<= 1) {2} = {3};", fl,
                           lanes, acc, merge(acc, other))
                 .str());
    }
  }
  /// The finished value of row `r`, feature `k` from `value` (the reduction
  /// over `count` edges), through the epilogue, stored.
  LogicalResult store(KernelBuilder &b, const std::string &value,
                      const std::string &count, const std::string &r,
                      const std::string &k) const {
    CUDAWriter &w = b.body;
    std::string a = kind == ReduceKind::mean
                        ? "(" + count + " == 0 ? 0.0f : (float)((double)(" +
                              value + ") / (double)" + count + "))"
                        : "(" + count + " == 0 ? 0.0f : (float)(" + value + "))";
    w.line("const float a = " + a + ";");
    FailureOr<std::string> out = b.epilogue("a", r, k);
    if (failed(out))
      return failure();
    w.line(llvm::formatv("{0}[{1} * {2}LL + {3}] = {4};", b.output(0), r, row, k,
                         *out)
               .str());
    return success();
  }

  Operation *op;
  ScheduleAttr s;
  SpmmOp spmm;
  Value input;
  bool reversed = false, extremum = false;
  ReduceKind kind = ReduceKind::sum;
  int64_t row = 0, vec = 1, lanes = 1, fl = 1, groups = 1, f = 1;
  std::string x, weights, colArray, slotArray;
};

} // namespace

LogicalResult Aggregation::emitMain(KernelBuilder &b) {
  std::string rows = b.rows("nodes");
  CUDAWriter &w = b.body;
  teamPrologue(b, lanes, rows);
  // Whole teams leave together; shuffles use the team's own lanes.
  w.line("if (!valid) return;");
  w.line(lanes == 32 ? "const unsigned mask = 0xffffffffu;"
                     : llvm::formatv("const unsigned mask = 0x{0:x-}u << "
                                     "((threadIdx.x & 31) & ~{1}u);",
                                     (1u << lanes) - 1, lanes - 1)
                           .str());
  w.line(llvm::formatv("const int g = lane / {0}, fl = lane % {0};", fl).str());
  std::string slotOf;
  rowRange(b, reversed, slotOf);
  if (s.getSplit())
    w.line(llvm::formatv("if (end - begin > {0}) return; // a heavy row: "
                         "{1}_partial and {1}_final",
                         s.getSplit(), b.spec.name)
               .str());
  bindInputs(b);
  reduceChunk(w, "begin + g", "end", groups, "mask");
  w.open("if (active && g == 0)");
  w.line("const long long count = end - begin;");
  for (int64_t v = 0; v < vec; ++v) {
    w.open("");
    w.line(llvm::formatv("const long long k = c + {0};", v).str());
    if (failed(store(b, llvm::formatv("acc[{0}]", v).str(), "count", "r", "k")))
      return failure();
    w.close();
  }
  w.close();
  w.close();
  b.spec.threads = "nodes * " + std::to_string(lanes);
  return success();
}

/// The row (destination, or source when reversed) of traversal position `j`.
static std::string rowOfPosition(KernelBuilder &b, bool reversed,
                                 const std::string &j) {
  if (!reversed)
    return "(long long)" + b.graph("csr_dst") + "[" + j + "]";
  return "(long long)" + b.graph("csr_col") + "[" + b.graph("csc_to_csr") + "[" +
         j + "]]";
}

LogicalResult Aggregation::emitPartial(KernelBuilder &b) {
  int64_t split = s.getSplit(), block = s.getBlock(), teams = block / lanes;
  CUDAWriter &w = b.body;
  std::string edges = b.rows("edges");
  std::string ptr = b.graph(reversed ? "csc_col_ptr" : "csr_row_ptr");
  std::string partials = b.scratch("partials", partialsSize());
  bindInputs(b);
  w.line(llvm::formatv("__shared__ {0} part[{1}][{2}];", accType(), teams,
                       fl * vec)
             .str());
  w.line(llvm::formatv("const long long lo = (long long)blockIdx.x * {0}LL;", split).str());
  w.line(llvm::formatv("const long long hi = min(lo + {0}LL, {1});", split, edges).str());
  w.line(llvm::formatv("const int team = threadIdx.x / {0}, lane = threadIdx.x % {0};",
                       lanes)
             .str());
  w.line(llvm::formatv("const int g = lane / {0}, fl = lane % {0};", fl).str());
  // The heavy rows touching the chunk: the row of its first position, and one
  // starting inside it (which must reach its end).
  w.open("for (int which = 0; which < 2; ++which)");
  w.line("const long long r = " + rowOfPosition(b, reversed, "which == 0 ? lo : hi - 1") + ";");
  w.line("const long long begin = " + ptr + "[r], end = " + ptr + "[r + 1];");
  w.line("const bool heavy = end - begin > " + std::to_string(split) +
         " && (which == 0 || (begin > lo && " + rowOfPosition(b, reversed, "lo") +
         " != r));");
  w.line("if (!heavy) continue; // uniform across the block");
  w.line("const long long from = max(begin, lo), to = min(end, hi);");
  reduceChunk(w, llvm::formatv("from + team * {0} + g", groups).str(), "to",
              teams * groups, "0xffffffffu");
  w.open("if (g == 0)");
  for (int64_t v = 0; v < vec; ++v)
    w.line(llvm::formatv("part[team][fl * {0} + {1}] = acc[{1}];", vec, v).str());
  w.close();
  w.line("__syncthreads();");
  w.open(llvm::formatv("for (int q = threadIdx.x; q < {0}; q += blockDim.x)", fl * vec)
             .str());
  w.line(llvm::formatv("{0} total = part[0][q];", accType()).str());
  w.line(llvm::formatv("for (int t2 = 1; t2 < {0}; ++t2) total = {1};", teams,
                       merge("total", "part[t2][q]"))
             .str());
  w.line(llvm::formatv("if (c0 + q < {0}) {1}[((long long)blockIdx.x * 2 + which) "
                       "* {0}LL + c0 + q] = (float)total;",
                       row, partials)
             .str());
  w.close();
  w.line("__syncthreads();");
  w.close(); // c0
  w.close(); // which
  b.spec.threads = llvm::formatv("ceil_div(edges, {0}) * {1}", split, block).str();
  b.spec.block = block;
  return success();
}

LogicalResult Aggregation::emitFinal(KernelBuilder &b) {
  int64_t split = s.getSplit(), block = s.getBlock();
  CUDAWriter &w = b.body;
  std::string edges = b.rows("edges");
  std::string ptr = b.graph(reversed ? "csc_col_ptr" : "csr_row_ptr");
  std::string partials = b.scratch("partials", partialsSize());
  w.line(llvm::formatv("const long long lo = (long long)blockIdx.x * {0}LL;", split).str());
  w.line(llvm::formatv("const long long hi = min(lo + {0}LL, {1});", split, edges).str());
  // The heavy row starting in this chunk, if any, is finished here.
  w.line("const long long r = " + rowOfPosition(b, reversed, "hi - 1") + ";");
  w.line("const long long begin = " + ptr + "[r], end = " + ptr + "[r + 1];");
  w.line(llvm::formatv("if (!(end - begin > {0} && begin >= lo)) return;", split).str());
  w.line(llvm::formatv("const long long first = begin / {0}, last = (end - 1) / {0};",
                       split)
             .str());
  w.line("const long long count = end - begin;");
  w.open(llvm::formatv("for (long long k = threadIdx.x; k < {0}; k += blockDim.x)", row)
             .str());
  w.line(llvm::formatv("{0} total = {1};", accType(), init()).str());
  w.open("for (long long cc = first; cc <= last; ++cc)");
  w.line(llvm::formatv("const long long which = (cc == first && begin != cc * {0}) ? 1 : 0;",
                       split)
             .str());
  w.line(llvm::formatv("const float p = {0}[(cc * 2 + which) * {1}LL + k];", partials,
                       row)
             .str());
  w.line("total = " + merge("total", extremum ? "p" : "(double)p") + ";");
  w.close();
  if (failed(store(b, "total", "count", "r", "k")))
    return failure();
  w.close();
  b.spec.threads = llvm::formatv("ceil_div(edges, {0}) * {1}", split, block).str();
  b.spec.block = block;
  return success();
}

/// A standalone linalg op: a thread per element of its (parallel) output,
/// looping over its reduction dimensions.
static LogicalResult emitElementwise(KernelBuilder &b, linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  int64_t numParallel = 0;
  while (numParallel < (int64_t)iters.size() &&
         iters[numParallel] == utils::IteratorType::parallel)
    ++numParallel;
  for (int64_t d = numParallel; d < (int64_t)iters.size(); ++d)
    if (iters[d] != utils::IteratorType::reduction)
      return op->emitOpError("expects parallel loops before reduction loops "
                             "in the CUDA backend");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op->getContext();
  AffineMap outMap = AffineMap::getMinorIdentityMap(op.getNumLoops(), numParallel, ctx);
  outMap = AffineMap::get(op.getNumLoops(), 0,
                          llvm::to_vector(llvm::map_range(
                              llvm::seq<int64_t>(0, numParallel),
                              [&](int64_t d) { return getAffineDimExpr(d, ctx); })),
                          ctx);
  for (OpOperand &init : op.getDpsInitsMutable())
    if (op.getMatchingIndexingMap(&init) != outMap)
      return op->emitOpError("expects every output indexed by the parallel "
                             "loops in order in the CUDA backend");
  // Loop bounds: the output shape for parallel loops, operands for reductions.
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> bounds(op.getNumLoops(), -1);
  for (int64_t d = 1; d < numParallel; ++d)
    bounds[d] = outType.getDimSize(d);
  for (OpOperand &operand : op->getOpOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!t)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [r, e] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(e))
        if (d.getPosition() >= (unsigned)numParallel && bounds[d.getPosition()] < 0 &&
            !ShapedType::isDynamic(t.getDimSize(r)))
          bounds[d.getPosition()] = t.getDimSize(r);
  }
  for (int64_t d = numParallel; d < (int64_t)bounds.size(); ++d)
    if (bounds[d] < 0)
      return op->emitOpError() << "has a reduction loop d" << d
                               << " of unknown static size";
  FailureOr<std::string> rowsF = rowsFormula(op->getResult(0));
  if (failed(rowsF))
    return failure();
  int64_t perRow = 1;
  for (int64_t d = 1; d < numParallel; ++d)
    perRow *= bounds[d];
  std::string rows = b.rows(*rowsF);
  CUDAWriter &w = b.body;
  threadPrologue(w, rows + " * " + std::to_string(perRow) + "LL");
  SmallVector<std::string> idx(op.getNumLoops());
  idx[0] = "i0";
  w.line(llvm::formatv("const long long i0 = t / {0}LL;", perRow).str());
  int64_t stride = perRow;
  for (int64_t d = 1; d < numParallel; ++d) {
    stride /= bounds[d];
    idx[d] = "i" + std::to_string(d);
    w.line(llvm::formatv("const long long {0} = (t / {1}LL) % {2}LL;", idx[d],
                         stride, bounds[d])
               .str());
  }
  // Accumulators start from the init: a constant fill, or the init's value.
  Block &block = op->getRegion(0).front();
  SmallVector<std::string> acc;
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    std::string name = "acc" + std::to_string(i);
    acc.push_back(name);
    BlockArgument arg = block.getArgument(op.getNumDpsInputs() + i);
    std::string start = "0.0f";
    if (!arg.use_empty()) {
      if (auto fill = init.get().getDefiningOp<linalg::FillOp>()) {
        auto c = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
        auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
        if (!f)
          return fill.emitOpError("fills an accumulator with a value that is "
                                  "not a constant");
        start = floatLiteral(f.getValueAsDouble());
      } else {
        FailureOr<std::string> a =
            b.access(init.get(), op.getMatchingIndexingMap(&init), idx, op);
        if (failed(a))
          return failure();
        start = *a;
      }
    }
    w.line("float " + name + " = " + start + ";");
  }
  int64_t opened = 0;
  for (int64_t d = numParallel; d < (int64_t)bounds.size(); ++d) {
    idx[d] = "i" + std::to_string(d);
    if (bounds[d] <= 32)
      w.line("#pragma unroll");
    w.open(llvm::formatv("for (long long {0} = 0; {0} < {1}; ++{0})", idx[d],
                         bounds[d])
               .str());
    ++opened;
  }
  SmallVector<std::string> args;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(in->get().getType())) {
      auto c = in->get().getDefiningOp<arith::ConstantOp>();
      auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
      if (!f)
        return op->emitOpError("has a scalar operand that is not a constant");
      args.push_back(floatLiteral(f.getValueAsDouble()));
      continue;
    }
    FailureOr<std::string> a =
        b.access(in->get(), op.getMatchingIndexingMap(in), idx, op);
    if (failed(a))
      return failure();
    args.push_back(*a);
  }
  for (const std::string &a : acc)
    args.push_back(a);
  SmallVector<std::string> yields;
  if (failed(b.scalarBody(block, args, yields, idx)))
    return failure();
  for (auto [a, y] : llvm::zip(acc, yields))
    w.line(a + " = " + y + ";");
  for (int64_t i = 0; i < opened; ++i)
    w.close();
  std::string outOffset = "i0 * " + std::to_string(perRow) + "LL";
  int64_t s2 = perRow;
  for (int64_t d = 1; d < numParallel; ++d) {
    s2 /= bounds[d];
    outOffset += " + " + idx[d] + " * " + std::to_string(s2) + "LL";
  }
  for (auto [i, a] : llvm::enumerate(acc))
    w.line(b.output(i) + "[" + outOffset + "] = " + a + ";");
  b.spec.threads = *rowsF + " * " + std::to_string(perRow);
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static const char *kPrelude = R"cuda(// Generated by gnnc. Do not edit.
#include "gnn_device.cuh"

__device__ __forceinline__ float gnn_add(float a, float b) { return a + b; }
__device__ __forceinline__ double gnn_add(double a, double b) { return a + b; }
__device__ __forceinline__ float gnn_maximumf(float a, float b) {
  return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}
__device__ __forceinline__ float gnn_minimumf(float a, float b) {
  return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : fminf(a, b);
}

/// Edge tensors at a Program's boundary: edge-list order <-> CSR slot order.
extern "C" __global__ void gnn_edges_to_slots(float *__restrict__ out,
    const float *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= rows * width) return;
  const long long i = t / width, k = t % width;
  out[t] = in[(long long)csr_edge[i] * width + k];
}
extern "C" __global__ void gnn_slots_to_edges(float *__restrict__ out,
    const float *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= rows * width) return;
  const long long i = t / width, k = t % width;
  out[(long long)csr_edge[i] * width + k] = in[t];
}
)cuda";

FailureOr<std::vector<KernelSpec>>
mlir::gnn::emitKernels(func::FuncOp func, llvm::raw_ostream &os,
                       const EmitOptions &options) {
  if (options.indexBits != 32 && options.indexBits != 64)
    return func.emitError("expects 32- or 64-bit graph indices");
  // Function arguments with a dynamic leading dimension are node tensors
  // unless marked (the reference evaluator's rule); say so in the IR so that
  // every value's rows can be derived.
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (t && t.getRank() > 0 && ShapedType::isDynamic(t.getDimSize(0)) &&
        !func.getArgAttr(i, kDomainAttrName))
      func.setArgAttr(i, kDomainAttrName,
                      StringAttr::get(func.getContext(), "node"));
  }
  std::vector<KernelSpec> specs;
  std::string kernels;
  WalkResult walk = func.walk([&](KernelGroupOp group) {
    ScheduleAttr s = group.getScheduleAttr();
    if (!s) {
      group.emitOpError("has no schedule; run gnn-select-schedules (or the "
                        "gnn-codegen-pipeline) first");
      return WalkResult::interrupt();
    }
    KernelBuilder b(group, options);
    b.spec.name = group.getKernel().str();
    b.spec.block = s.getBlock();
    b.spec.group = group;
    Block &body = group.getBody().front();
    Operation *anchor = &body.front();
    for (Operation &op : body)
      if (failed(checkF32(&op)))
        return WalkResult::interrupt();
    for (Operation &op : llvm::drop_begin(body.without_terminator())) {
      auto consumer = dyn_cast<linalg::GenericOp>(op);
      if (!consumer)
        return op.emitOpError("is not an elementwise consumer; a kernel "
                              "group holds one anchor op and its consumers"),
               WalkResult::interrupt();
      b.chain.push_back(consumer);
    }
    if (group.getNumResults() != (b.chain.empty() ? anchor->getNumResults() : 1) ||
        group.getYield().getValues().front().getDefiningOp() !=
            (b.chain.empty() ? anchor : b.chain.back().getOperation())) {
      group.emitOpError("expects to yield the result of its last op");
      return WalkResult::interrupt();
    }
    // Writes one builder's kernel: the signature, then its body.
    auto render = [&](KernelBuilder &kb) {
      std::string sig = "extern \"C\" __global__ void __launch_bounds__(" +
                        std::to_string(kb.spec.block) + ") " + kb.spec.name + "(";
      for (auto [i, p] : llvm::enumerate(kb.spec.params)) {
        sig += i ? ",\n    " : "\n    ";
        switch (p.kind) {
        case KernelParam::Kind::Input: sig += "const float *__restrict__ "; break;
        case KernelParam::Kind::Output: sig += "float *__restrict__ "; break;
        case KernelParam::Kind::GraphArray: sig += "const idx_t *__restrict__ "; break;
        case KernelParam::Kind::Rows: sig += "long long "; break;
        case KernelParam::Kind::Scratch: sig += "float *__restrict__ "; break;
        }
        sig += kb.names[i];
      }
      kernels += "\n// " + kb.spec.name + ": " +
                 anchor->getName().getStringRef().str() +
                 llvm::formatv(", {0}, lanes {1}, block {2}, vector {3}, split {4}\n",
                               stringifyMapping(s.getMapping()), s.getLanes(),
                               s.getBlock(), s.getVector(), s.getSplit())
                     .str();
      kernels += sig + ") {\n";
      std::string text = kb.body.str();
      size_t pos = 0;
      while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        kernels += "  " + text.substr(pos, end - pos) + "\n";
        pos = end + 1;
      }
      kernels += "}\n";
      specs.push_back(std::move(kb.spec));
    };
    if (isa<SpmmOp, ReduceOp>(anchor)) {
      Aggregation agg(anchor, s);
      if (failed(agg.check()) || failed(agg.emitMain(b)))
        return WalkResult::interrupt();
      render(b);
      if (s.getSplit()) {
        KernelBuilder partial(group, options), final(group, options);
        partial.spec.name = group.getKernel().str() + "_partial";
        final.spec.name = group.getKernel().str() + "_final";
        for (KernelBuilder *kb : {&partial, &final}) {
          kb->spec.group = group;
          kb->chain = b.chain;
        }
        if (failed(agg.emitPartial(partial)) || failed(agg.emitFinal(final)))
          return WalkResult::interrupt();
        render(partial);
        render(final);
      }
      return WalkResult::advance();
    }
    LogicalResult r =
        llvm::TypeSwitch<Operation *, LogicalResult>(anchor)
            .Case([&](DegreeOp op) { return emitDegree(b, op); })
            .Case([&](GatherOp op) { return emitGather(b, op); })
            .Case([&](SddmmOp op) { return emitSddmm(b, op); })
            .Case([&](EdgeSoftmaxOp op) { return emitEdgeSoftmax(b, op, s); })
            .Case([&](linalg::LinalgOp op) -> LogicalResult {
              if (!b.chain.empty())
                return op->emitOpError("cannot have absorbed consumers");
              return emitElementwise(b, op);
            })
            .Default([&](Operation *op) {
              return op->emitOpError("is not supported by the CUDA backend");
            });
    if (failed(r))
      return WalkResult::interrupt();
    render(b);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  os << "typedef " << (options.indexBits == 32 ? "int" : "long long")
     << " idx_t;\n"
     << kPrelude << kernels;
  return specs;
}
