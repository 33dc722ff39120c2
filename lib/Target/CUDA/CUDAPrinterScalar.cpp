//===- CUDAPrinterScalar.cpp - arith, math and scf ops as CUDA C++ --------===//
//
// Part of gnnc. The scalar part of the gnnk CUDA printer: every result is a
// `const T vN = <expr>;` local over the C expressions of the operands;
// constants are inlined as exact literals; scf.for and scf.if keep their
// carried values and results in mutable locals.
//
//===----------------------------------------------------------------------===//

#include "CUDAPrinterState.h"

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::cuda;

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

std::string cuda::getFloatLiteral(const APFloat &value, Type type) {
  bool isFloat = type.isF32();
  // NaNs (with their payload) and infinities by their bits.
  if (value.isNaN() || value.isInfinity()) {
    uint64_t bits = value.bitcastToAPInt().getZExtValue();
    char text[64];
    if (isFloat)
      std::snprintf(text, sizeof(text),
                    bits >> 31 ? "__int_as_float((int)0x%08llxu)"
                               : "__int_as_float(0x%08llx)",
                    static_cast<unsigned long long>(bits));
    else
      std::snprintf(text, sizeof(text),
                    bits >> 63 ? "__longlong_as_double((long long)0x%016llxull)"
                               : "__longlong_as_double(0x%016llxLL)",
                    static_cast<unsigned long long>(bits));
    return text;
  }
  // The shortest decimal that reads back as the same value.
  double v = isFloat ? static_cast<double>(value.convertToFloat())
                     : value.convertToDouble();
  char text[64];
  for (int precision = 1; precision <= (isFloat ? 9 : 17); ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, v);
    if (isFloat ? std::strtof(text, nullptr) == static_cast<float>(v)
                : std::strtod(text, nullptr) == v)
      break;
  }
  std::string literal = text;
  if (literal.find_first_of(".e") == std::string::npos)
    literal += ".0";
  if (isFloat)
    literal += "f";
  return literal[0] == '-' ? "(" + literal + ")" : literal;
}

std::string cuda::getIntegerLiteral(const APInt &value, Type type) {
  if (type.isInteger(1))
    return value.getBoolValue() ? "true" : "false";
  int64_t v = value.getSExtValue();
  bool isInt = type.isInteger(32);
  if (v == (isInt ? INT32_MIN : INT64_MIN))
    return isInt ? "(-2147483647 - 1)" : "(-9223372036854775807LL - 1)";
  std::string literal = std::to_string(v) + (isInt ? "" : "LL");
  return v < 0 ? "(" + literal + ")" : literal;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// The C expressions of an op's operands.
struct Operands {
  Operands(CUDAPrinterState &state, Operation *op) {
    for (Value v : op->getOperands())
      exprs.push_back(state.getExpr(v).str());
  }
  const std::string &operator[](unsigned i) const { return exprs[i]; }
  SmallVector<std::string, 3> exprs;
};
} // namespace

/// `const T vN = rhs;` for the single result of `op`.
static LogicalResult printExpr(CUDAPrinterState &state, Operation *op,
                               const Twine &rhs) {
  return state.printConstLocal(op->getResult(0), rhs);
}

/// The C type of `value`'s type (checked where `value` was defined).
static StringRef typeOf(Value value) { return getScalarType(value.getType()); }

/// The unsigned C type of an integer type of the given C type.
static StringRef getUnsignedType(Type type) {
  return type.isInteger(32) ? "unsigned" : "unsigned long long";
}

/// `value` read as an unsigned integer: an unsigned literal for a constant,
/// else a cast. A bool is already 0 or 1.
static std::string getUnsigned(CUDAPrinterState &state, Value value) {
  Type type = value.getType();
  if (type.isInteger(1))
    return state.getExpr(value).str();
  APInt c;
  if (matchPattern(value, m_ConstantInt(&c)))
    return llvm::utostr(c.getZExtValue()) + (type.isInteger(32) ? "u" : "ull");
  return ("(" + getUnsignedType(type) + ")" + state.getExpr(value)).str();
}

/// `a <op> b`.
static LogicalResult printBinary(CUDAPrinterState &state, Operation *op,
                                 StringRef cOp) {
  Operands in(state, op);
  return printExpr(state, op, in[0] + " " + cOp + " " + in[1]);
}

/// `(T)(ua <op> ub)` on the unsigned reading of both operands.
static LogicalResult printUnsignedBinary(CUDAPrinterState &state, Operation *op,
                                         StringRef cOp) {
  Value a = op->getOperand(0), b = op->getOperand(1);
  return printExpr(state, op,
                   "(" + typeOf(op->getResult(0)) + ")(" +
                       getUnsigned(state, a) + " " + cOp + " " +
                       getUnsigned(state, b) + ")");
}

/// `fn(a, b, ...)`.
static LogicalResult printCall(CUDAPrinterState &state, Operation *op,
                               StringRef fn) {
  Operands in(state, op);
  return printExpr(state, op, fn + "(" + llvm::join(in.exprs, ", ") + ")");
}

/// A libdevice math function: `expf` for f32, `exp` for f64.
static LogicalResult printMathCall(CUDAPrinterState &state, Operation *op,
                                   StringRef base) {
  return printCall(state, op,
                   op->getResult(0).getType().isF32() ? (base + "f").str()
                                                      : base.str());
}

/// `(T)a` for the result's C type T.
static LogicalResult printCast(CUDAPrinterState &state, Operation *op) {
  Type from = op->getOperand(0).getType(), to = op->getResult(0).getType();
  std::string in = state.getExpr(op->getOperand(0)).str();
  // bf16 and f16 scalars (a linalg body's explicit rounding) convert through
  // f32: gnn_round_bf16 / gnn_round_f16 round to nearest even, gnn_widen is
  // exact.
  if (from.isBF16() || from.isF16())
    in = "gnn_widen(" + in + ")";
  if (to.isBF16() || to.isF16()) {
    if (!from.isF32())
      in = "(float)" + in;
    return printExpr(state, op,
                     (to.isBF16() ? "gnn_round_bf16(" : "gnn_round_f16(") + in +
                         ")");
  }
  return printExpr(state, op, "(" + typeOf(op->getResult(0)) + ")" + in);
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

/// Constants are not printed: their uses read the literal.
static LogicalResult printOperation(CUDAPrinterState &state,
                                    arith::ConstantOp op) {
  Type type = op.getType();
  if (failed(state.getType(op, type)))
    return failure();
  if (auto f = dyn_cast<FloatAttr>(op.getValue()))
    state.bind(op.getResult(), getFloatLiteral(f.getValue(), type));
  else if (auto i = dyn_cast<IntegerAttr>(op.getValue()))
    state.bind(op.getResult(), getIntegerLiteral(i.getValue(), type));
  else
    return op.emitOpError("is not supported by the CUDA printer");
  return success();
}

/// A float comparison with MLIR's ordered / unordered semantics.
static LogicalResult printOperation(CUDAPrinterState &state, arith::CmpFOp op) {
  using P = arith::CmpFPredicate;
  Operands in(state, op);
  const std::string &a = in[0], &b = in[1];
  std::string unordered =
      a == b ? "isnan(" + a + ")" : "isnan(" + a + ") || isnan(" + b + ")";
  std::string text;
  switch (op.getPredicate()) {
  case P::AlwaysFalse:
    text = "false";
    break;
  case P::AlwaysTrue:
    text = "true";
    break;
  case P::OEQ:
    text = a + " == " + b;
    break;
  case P::OGT:
    text = a + " > " + b;
    break;
  case P::OGE:
    text = a + " >= " + b;
    break;
  case P::OLT:
    text = a + " < " + b;
    break;
  case P::OLE:
    text = a + " <= " + b;
    break;
  case P::ONE:
    text = a + " < " + b + " || " + a + " > " + b;
    break;
  case P::ORD:
    text = "!(" + unordered + ")";
    break;
  case P::UEQ:
    text = "!(" + a + " < " + b + " || " + a + " > " + b + ")";
    break;
  case P::UGT:
    text = "!(" + a + " <= " + b + ")";
    break;
  case P::UGE:
    text = "!(" + a + " < " + b + ")";
    break;
  case P::ULT:
    text = "!(" + a + " >= " + b + ")";
    break;
  case P::ULE:
    text = "!(" + a + " > " + b + ")";
    break;
  case P::UNE:
    text = "!(" + a + " == " + b + ")";
    break;
  case P::UNO:
    text = unordered;
    break;
  }
  return printExpr(state, op, text);
}

/// An integer comparison; unsigned predicates compare the unsigned readings.
static LogicalResult printOperation(CUDAPrinterState &state, arith::CmpIOp op) {
  using P = arith::CmpIPredicate;
  P p = op.getPredicate();
  // A signed i1 reads true as -1: its signed order is the reverse of the
  // unsigned one.
  if (op.getLhs().getType().isInteger(1)) {
    switch (p) {
    case P::slt:
      p = P::ugt;
      break;
    case P::sle:
      p = P::uge;
      break;
    case P::sgt:
      p = P::ult;
      break;
    case P::sge:
      p = P::ule;
      break;
    default:
      break;
    }
  }
  StringRef cOp;
  bool isUnsigned = false;
  switch (p) {
  case P::eq:
    cOp = "==";
    break;
  case P::ne:
    cOp = "!=";
    break;
  case P::slt:
    cOp = "<";
    break;
  case P::sle:
    cOp = "<=";
    break;
  case P::sgt:
    cOp = ">";
    break;
  case P::sge:
    cOp = ">=";
    break;
  case P::ult:
    cOp = "<", isUnsigned = true;
    break;
  case P::ule:
    cOp = "<=", isUnsigned = true;
    break;
  case P::ugt:
    cOp = ">", isUnsigned = true;
    break;
  case P::uge:
    cOp = ">=", isUnsigned = true;
    break;
  }
  if (!isUnsigned)
    return printBinary(state, op, cOp);
  return printExpr(state, op,
                   getUnsigned(state, op.getLhs()) + " " + cOp + " " +
                       getUnsigned(state, op.getRhs()));
}

/// Signed / unsigned maximum and minimum: `a > b ? a : b`.
static LogicalResult printIntExtremum(CUDAPrinterState &state, Operation *op,
                                      StringRef cOp, bool isUnsigned) {
  Operands in(state, op);
  Value a = op->getOperand(0), b = op->getOperand(1);
  std::string ca = isUnsigned ? getUnsigned(state, a) : in[0];
  std::string cb = isUnsigned ? getUnsigned(state, b) : in[1];
  return printExpr(state, op,
                   ca + " " + cOp + " " + cb + " ? " + in[0] + " : " + in[1]);
}

/// Logical on i1, bitwise otherwise.
static LogicalResult printBitwise(CUDAPrinterState &state, Operation *op,
                                  StringRef logical, StringRef bitwise) {
  return printBinary(
      state, op, op->getResult(0).getType().isInteger(1) ? logical : bitwise);
}

/// Integer extensions and truncations, index casts.
static LogicalResult printIntCast(CUDAPrinterState &state, Operation *op,
                                  bool isUnsigned) {
  Value in = op->getOperand(0);
  Type from = in.getType(), to = op->getResult(0).getType();
  StringRef type = typeOf(op->getResult(0));
  if (to.isInteger(1))
    return printExpr(state, op, "(" + state.getExpr(in) + " & 1) != 0");
  if (from.isInteger(1) && !isUnsigned)
    return printExpr(state, op,
                     "(" + type + ")(" + state.getExpr(in) + " ? -1 : 0)");
  if (isUnsigned && from.isInteger(32))
    return printExpr(state, op, "(" + type + ")" + getUnsigned(state, in));
  return printCast(state, op);
}

/// Integer to float conversions.
static LogicalResult printIntToFloat(CUDAPrinterState &state, Operation *op,
                                     bool isUnsigned) {
  Value in = op->getOperand(0);
  StringRef type = typeOf(op->getResult(0));
  if (in.getType().isInteger(1) && !isUnsigned)
    return printExpr(state, op,
                     "(" + type + ")(" + state.getExpr(in) + " ? -1 : 0)");
  if (isUnsigned)
    return printExpr(state, op, "(" + type + ")" + getUnsigned(state, in));
  return printCast(state, op);
}

/// Float to integer conversions.
static LogicalResult printFloatToInt(CUDAPrinterState &state, Operation *op,
                                     bool isUnsigned) {
  Type to = op->getResult(0).getType();
  if (!isUnsigned || to.isInteger(1))
    return printCast(state, op);
  return printExpr(state, op,
                   "(" + typeOf(op->getResult(0)) + ")(" + getUnsignedType(to) +
                       ")" + state.getExpr(op->getOperand(0)));
}

/// Adds, subtracts and multiplies integers; on i1 these are xor, xor, and.
static LogicalResult printIntArith(CUDAPrinterState &state, Operation *op,
                                   StringRef cOp, StringRef onBool) {
  return printBinary(state, op,
                     op->getResult(0).getType().isInteger(1) ? onBool : cOp);
}

static LogicalResult printArith(CUDAPrinterState &state, Operation &op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<arith::ConstantOp, arith::CmpFOp, arith::CmpIOp>(
          [&](auto op) { return printOperation(state, op); })
      // Floats.
      .Case<arith::AddFOp>([&](auto) { return printBinary(state, &op, "+"); })
      .Case<arith::SubFOp>([&](auto) { return printBinary(state, &op, "-"); })
      .Case<arith::MulFOp>([&](auto) { return printBinary(state, &op, "*"); })
      .Case<arith::DivFOp>([&](auto) { return printBinary(state, &op, "/"); })
      .Case<arith::RemFOp>(
          [&](auto) { return printMathCall(state, &op, "fmod"); })
      .Case<arith::NegFOp>([&](arith::NegFOp n) {
        return printExpr(state, n, "-" + state.getExpr(n.getOperand()));
      })
      .Case<arith::MaximumFOp>(
          [&](auto) { return printCall(state, &op, "gnn_maximumf"); })
      .Case<arith::MinimumFOp>(
          [&](auto) { return printCall(state, &op, "gnn_minimumf"); })
      .Case<arith::MaxNumFOp>(
          [&](auto) { return printMathCall(state, &op, "fmax"); })
      .Case<arith::MinNumFOp>(
          [&](auto) { return printMathCall(state, &op, "fmin"); })
      .Case<arith::ExtFOp, arith::TruncFOp>(
          [&](auto) { return printCast(state, &op); })
      // Integers.
      .Case<arith::AddIOp>(
          [&](auto) { return printIntArith(state, &op, "+", "!="); })
      .Case<arith::SubIOp>(
          [&](auto) { return printIntArith(state, &op, "-", "!="); })
      .Case<arith::MulIOp>(
          [&](auto) { return printIntArith(state, &op, "*", "&&"); })
      .Case<arith::DivSIOp>([&](auto) { return printBinary(state, &op, "/"); })
      .Case<arith::RemSIOp>([&](auto) { return printBinary(state, &op, "%"); })
      .Case<arith::DivUIOp>(
          [&](auto) { return printUnsignedBinary(state, &op, "/"); })
      .Case<arith::RemUIOp>(
          [&](auto) { return printUnsignedBinary(state, &op, "%"); })
      .Case<arith::CeilDivSIOp>(
          [&](auto) { return printCall(state, &op, "gnn_ceildivsi"); })
      .Case<arith::FloorDivSIOp>(
          [&](auto) { return printCall(state, &op, "gnn_floordivsi"); })
      .Case<arith::CeilDivUIOp>([&](arith::CeilDivUIOp c) {
        return printExpr(state, c,
                         "(" + typeOf(c.getResult()) + ")gnn_ceildivui(" +
                             getUnsigned(state, c.getLhs()) + ", " +
                             getUnsigned(state, c.getRhs()) + ")");
      })
      .Case<arith::MaxSIOp>(
          [&](auto) { return printIntExtremum(state, &op, ">", false); })
      .Case<arith::MinSIOp>(
          [&](auto) { return printIntExtremum(state, &op, "<", false); })
      .Case<arith::MaxUIOp>(
          [&](auto) { return printIntExtremum(state, &op, ">", true); })
      .Case<arith::MinUIOp>(
          [&](auto) { return printIntExtremum(state, &op, "<", true); })
      // Through the unsigned type: arith.shli is a bit shift, where a signed
      // C++ left shift into or past the sign bit is undefined.
      .Case<arith::ShLIOp>([&](arith::ShLIOp s) {
        return printExpr(state, s,
                         "(" + typeOf(s.getResult()) + ")(" +
                             getUnsigned(state, s.getLhs()) + " << " +
                             state.getExpr(s.getRhs()) + ")");
      })
      .Case<arith::ShRSIOp>([&](auto) { return printBinary(state, &op, ">>"); })
      .Case<arith::ShRUIOp>([&](arith::ShRUIOp s) {
        return printExpr(state, s,
                         "(" + typeOf(s.getResult()) + ")(" +
                             getUnsigned(state, s.getLhs()) + " >> " +
                             state.getExpr(s.getRhs()) + ")");
      })
      .Case<arith::AndIOp>(
          [&](auto) { return printBitwise(state, &op, "&&", "&"); })
      .Case<arith::OrIOp>(
          [&](auto) { return printBitwise(state, &op, "||", "|"); })
      .Case<arith::XOrIOp>(
          [&](auto) { return printBitwise(state, &op, "!=", "^"); })
      .Case<arith::SelectOp>([&](arith::SelectOp s) {
        Operands in(state, s);
        return printExpr(state, s, in[0] + " ? " + in[1] + " : " + in[2]);
      })
      // Conversions.
      .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
          [&](auto) { return printIntCast(state, &op, false); })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp>(
          [&](auto) { return printIntCast(state, &op, true); })
      .Case<arith::SIToFPOp>(
          [&](auto) { return printIntToFloat(state, &op, false); })
      .Case<arith::UIToFPOp>(
          [&](auto) { return printIntToFloat(state, &op, true); })
      .Case<arith::FPToSIOp>(
          [&](auto) { return printFloatToInt(state, &op, false); })
      .Case<arith::FPToUIOp>(
          [&](auto) { return printFloatToInt(state, &op, true); })
      .Default([&](Operation *op) {
        return op->emitOpError("is not supported by the CUDA printer");
      });
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

static LogicalResult printMath(CUDAPrinterState &state, Operation &op) {
  // An f32 exp marked `afn` (approximate functions) is the hardware's
  // ex2.approx-based `__expf`.
  if (auto exp = dyn_cast<math::ExpOp>(op))
    if (exp.getType().isF32() &&
        arith::bitEnumContainsAll(exp.getFastmath(), arith::FastMathFlags::afn))
      return printCall(state, &op, "__expf");
  StringRef base = llvm::TypeSwitch<Operation *, StringRef>(&op)
                       .Case<math::ExpOp>([](auto) { return "exp"; })
                       .Case<math::Exp2Op>([](auto) { return "exp2"; })
                       .Case<math::LogOp>([](auto) { return "log"; })
                       .Case<math::Log2Op>([](auto) { return "log2"; })
                       .Case<math::Log1pOp>([](auto) { return "log1p"; })
                       .Case<math::ExpM1Op>([](auto) { return "expm1"; })
                       .Case<math::TanhOp>([](auto) { return "tanh"; })
                       .Case<math::SqrtOp>([](auto) { return "sqrt"; })
                       .Case<math::RsqrtOp>([](auto) { return "rsqrt"; })
                       .Case<math::PowFOp>([](auto) { return "pow"; })
                       .Case<math::AbsFOp>([](auto) { return "fabs"; })
                       .Case<math::ErfOp>([](auto) { return "erf"; })
                       .Case<math::SinOp>([](auto) { return "sin"; })
                       .Case<math::CosOp>([](auto) { return "cos"; })
                       .Case<math::FloorOp>([](auto) { return "floor"; })
                       .Case<math::CeilOp>([](auto) { return "ceil"; })
                       .Case<math::FmaOp>([](auto) { return "fma"; })
                       .Default([](Operation *) { return ""; });
  if (base.empty())
    return op.emitOpError("is not supported by the CUDA printer");
  return printMathCall(state, &op, base);
}

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

/// The carried values are mutable locals:
///
///   float acc0 = v1;
///   #pragma unroll
///   for (long long iv2 = 0LL; iv2 < 8LL; iv2 += 1LL) {
///     ...
///     acc0 = v4;
///   }
///
/// `#pragma unroll N` for a `gnnk.unroll` of N (1 keeps a loop rolled), else
/// `#pragma unroll` when the bounds are constants with at most 32 trips.
static LogicalResult printOperation(CUDAPrinterState &state, scf::ForOp op) {
  raw_indented_ostream &os = state.ostream();
  FailureOr<StringRef> ivType =
      state.getType(op, op.getInductionVar().getType());
  if (failed(ivType))
    return failure();
  FailureOr<SmallVector<std::string>> carried =
      state.printMutableLocals(op, op.getInitArgs(), "acc");
  if (failed(carried))
    return failure();
  APInt lb, ub, step;
  if (auto unroll = op->getAttrOfType<IntegerAttr>(gnnk::kUnrollAttrName)) {
    if (unroll.getInt() < 1 || unroll.getInt() > 16)
      return op.emitOpError() << "expects " << gnnk::kUnrollAttrName
                              << " in [1, 16] but got " << unroll.getInt();
    os << "#pragma unroll " << unroll.getInt() << "\n";
  } else if (matchPattern(op.getLowerBound(), m_ConstantInt(&lb)) &&
             matchPattern(op.getUpperBound(), m_ConstantInt(&ub)) &&
             matchPattern(op.getStep(), m_ConstantInt(&step)) &&
             step.getSExtValue() > 0) {
    int64_t l = lb.getSExtValue(), u = ub.getSExtValue(),
            s = step.getSExtValue();
    int64_t trips = u > l ? (u - l + s - 1) / s : 0;
    if (trips <= 32)
      os << "#pragma unroll\n";
  }
  std::string iv = state.getFreshName("iv");
  state.bind(op.getInductionVar(), iv);
  std::string cond = op.getUnsignedCmp()
                         ? getUnsigned(state, op.getInductionVar()) + " < " +
                               getUnsigned(state, op.getUpperBound())
                         : iv + " < " + state.getExpr(op.getUpperBound()).str();
  os << "for (" << *ivType << " " << iv << " = "
     << state.getExpr(op.getLowerBound()) << "; " << cond << "; " << iv
     << " += " << state.getExpr(op.getStep()) << ") {\n";
  os.indent();
  for (auto [arg, name] : llvm::zip_equal(op.getRegionIterArgs(), *carried))
    state.bind(arg, name);
  Block &body = *op.getBody();
  if (failed(state.printBlock(body)))
    return failure();
  SmallVector<std::string> yields;
  for (Value v : body.getTerminator()->getOperands())
    yields.push_back(state.getExpr(v).str());
  state.printAssignments(*carried, yields, op.getInitArgs().getTypes());
  os.unindent() << "}\n";
  for (auto [result, name] : llvm::zip_equal(op.getResults(), *carried))
    state.bind(result, name);
  return success();
}

/// Results are mutable locals declared before the `if` and assigned at the
/// end of each branch.
static LogicalResult printOperation(CUDAPrinterState &state, scf::IfOp op) {
  raw_indented_ostream &os = state.ostream();
  SmallVector<std::string> results;
  for (Value result : op.getResults()) {
    FailureOr<StringRef> type = state.getType(op, result.getType());
    if (failed(type))
      return failure();
    results.push_back(state.getFreshName("v"));
    os << *type << " " << results.back() << ";\n";
  }
  auto printBranch = [&](Region &region) -> LogicalResult {
    os.indent();
    SmallVector<std::string> yields;
    if (failed(state.printInlined(region.front(), {}, yields)))
      return failure();
    state.printAssignments(results, yields, op.getResultTypes());
    os.unindent();
    return success();
  };
  os << "if (" << state.getExpr(op.getCondition()) << ") {\n";
  if (failed(printBranch(op.getThenRegion())))
    return failure();
  Region &elseRegion = op.getElseRegion();
  if (!elseRegion.empty() &&
      (op.getNumResults() ||
       !elseRegion.front().without_terminator().empty())) {
    os << "} else {\n";
    if (failed(printBranch(elseRegion)))
      return failure();
  }
  os << "}\n";
  for (auto [result, name] : llvm::zip_equal(op.getResults(), results))
    state.bind(result, name);
  return success();
}

LogicalResult cuda::printScalarOperation(CUDAPrinterState &state,
                                         Operation &op) {
  Dialect *dialect = op.getDialect();
  if (isa_and_nonnull<arith::ArithDialect>(dialect))
    return printArith(state, op);
  if (isa_and_nonnull<math::MathDialect>(dialect))
    return printMath(state, op);
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<scf::ForOp, scf::IfOp>(
          [&](auto op) { return ::printOperation(state, op); })
      .Default([&](Operation *op) {
        return op->emitOpError("is not supported by the CUDA printer");
      });
}
