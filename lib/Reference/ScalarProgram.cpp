//===- ScalarProgram.cpp - scalar bodies of linalg ops --------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "ScalarProgram.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace gnn::reference;

/// The width of an integer or index type (index: 64), 0 for other types.
static uint8_t intBits(Type t) {
  if (t.isIndex())
    return 64;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth() <= 64 ? i.getWidth() : 0;
  return 0;
}

/// Maps an op to its opcode and arity; returns false for unsupported ops
/// (integers wider than 64 bits too).
static bool classify(Operation *op, Instr &in) {
  in.imm = 0;
  Instr::Opcode &code = in.op;
  bool ok = true;
  // The integer width of the op's first operand (its result's for ops
  // without operands), and of its result.
  Type from = op->getNumOperands() ? op->getOperand(0).getType()
                                   : op->getResult(0).getType();
  in.bits = intBits(from);
  in.toBits = intBits(op->getResult(0).getType());
  llvm::TypeSwitch<Operation *>(op)
      .Case<arith::AddFOp>([&](auto) { code = Instr::Add; })
      .Case<arith::SubFOp>([&](auto) { code = Instr::Sub; })
      .Case<arith::MulFOp>([&](auto) { code = Instr::Mul; })
      .Case<arith::DivFOp>([&](auto) { code = Instr::Div; })
      .Case<arith::RemFOp>([&](auto) { code = Instr::Rem; })
      .Case<arith::NegFOp>([&](auto) { code = Instr::Neg; })
      .Case<arith::MaximumFOp>([&](auto) { code = Instr::Maximum; })
      .Case<arith::MinimumFOp>([&](auto) { code = Instr::Minimum; })
      .Case<arith::MaxNumFOp>([&](auto) { code = Instr::MaxNum; })
      .Case<arith::MinNumFOp>([&](auto) { code = Instr::MinNum; })
      .Case<arith::CmpFOp>([&](arith::CmpFOp c) {
        code = Instr::CmpF;
        in.imm = static_cast<double>(c.getPredicate());
      })
      .Case<arith::AddIOp>([&](auto) { code = Instr::AddI; })
      .Case<arith::SubIOp>([&](auto) { code = Instr::SubI; })
      .Case<arith::MulIOp>([&](auto) { code = Instr::MulI; })
      .Case<arith::DivSIOp>([&](auto) { code = Instr::DivSI; })
      .Case<arith::DivUIOp>([&](auto) { code = Instr::DivUI; })
      .Case<arith::CeilDivSIOp>([&](auto) { code = Instr::CeilDivSI; })
      .Case<arith::FloorDivSIOp>([&](auto) { code = Instr::FloorDivSI; })
      .Case<arith::CeilDivUIOp>([&](auto) { code = Instr::CeilDivUI; })
      .Case<arith::RemSIOp>([&](auto) { code = Instr::RemSI; })
      .Case<arith::RemUIOp>([&](auto) { code = Instr::RemUI; })
      .Case<arith::MaxSIOp>([&](auto) { code = Instr::MaxSI; })
      .Case<arith::MaxUIOp>([&](auto) { code = Instr::MaxUI; })
      .Case<arith::MinSIOp>([&](auto) { code = Instr::MinSI; })
      .Case<arith::MinUIOp>([&](auto) { code = Instr::MinUI; })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
        code = Instr::CmpI;
        in.imm = static_cast<double>(c.getPredicate());
      })
      .Case<arith::AndIOp>([&](auto) { code = Instr::AndI; })
      .Case<arith::OrIOp>([&](auto) { code = Instr::OrI; })
      .Case<arith::XOrIOp>([&](auto) { code = Instr::XorI; })
      .Case<arith::ShLIOp>([&](auto) { code = Instr::ShLI; })
      .Case<arith::ShRSIOp>([&](auto) { code = Instr::ShRSI; })
      .Case<arith::ShRUIOp>([&](auto) { code = Instr::ShRUI; })
      .Case<arith::SelectOp>([&](auto) { code = Instr::Select; })
      // Precision changes of floats are exact in the double-precision
      // reference.
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) { code = Instr::Copy; })
      .Case<arith::ExtSIOp, arith::IndexCastOp>([&](auto) {
        code = in.toBits < in.bits ? Instr::TruncI : Instr::ExtSI;
      })
      .Case<arith::ExtUIOp, arith::IndexCastUIOp>([&](auto) {
        code = in.toBits < in.bits ? Instr::TruncI : Instr::ExtUI;
      })
      .Case<arith::TruncIOp>([&](auto) { code = Instr::TruncI; })
      .Case<arith::SIToFPOp>([&](auto) { code = Instr::SIToFP; })
      .Case<arith::UIToFPOp>([&](auto) { code = Instr::UIToFP; })
      .Case<arith::FPToSIOp, arith::FPToUIOp>([&](auto) { code = Instr::Trunc; })
      .Case<math::ExpOp>([&](auto) { code = Instr::Exp; })
      .Case<math::Exp2Op>([&](auto) { code = Instr::Exp2; })
      .Case<math::LogOp>([&](auto) { code = Instr::Log; })
      .Case<math::Log2Op>([&](auto) { code = Instr::Log2; })
      .Case<math::Log1pOp>([&](auto) { code = Instr::Log1p; })
      .Case<math::ExpM1Op>([&](auto) { code = Instr::Expm1; })
      .Case<math::TanhOp>([&](auto) { code = Instr::Tanh; })
      .Case<math::SqrtOp>([&](auto) { code = Instr::Sqrt; })
      .Case<math::RsqrtOp>([&](auto) { code = Instr::Rsqrt; })
      .Case<math::PowFOp>([&](auto) { code = Instr::Pow; })
      .Case<math::AbsFOp>([&](auto) { code = Instr::Abs; })
      .Case<math::ErfOp>([&](auto) { code = Instr::Erf; })
      .Case<math::SinOp>([&](auto) { code = Instr::Sin; })
      .Case<math::CosOp>([&](auto) { code = Instr::Cos; })
      .Case<math::FloorOp>([&](auto) { code = Instr::Floor; })
      .Case<math::CeilOp>([&](auto) { code = Instr::Ceil; })
      .Case<math::FmaOp>([&](auto) { code = Instr::Fma; })
      .Case<linalg::IndexOp>([&](linalg::IndexOp i) {
        code = Instr::Index;
        in.imm = static_cast<double>(i.getDim());
      })
      .Default([&](Operation *) { ok = false; });
  // An integer op needs its widths (none wider than 64 bits).
  if (ok && code >= Instr::AddI)
    ok = in.bits > 0 && (in.toBits > 0 || code == Instr::SIToFP ||
                         code == Instr::UIToFP);
  return ok;
}

/// The value of a scalar constant attribute as a double.
static FailureOr<double> constantValue(arith::ConstantOp op) {
  if (auto f = dyn_cast<FloatAttr>(op.getValue()))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(op.getValue())) {
    if (i.getType().isInteger(1))
      return static_cast<double>(i.getValue().getBoolValue());
    return static_cast<double>(i.getValue().getSExtValue());
  }
  return failure();
}

FailureOr<ScalarProgram> ScalarProgram::compile(
    Block &block, llvm::function_ref<FailureOr<double>(Value)> outer) {
  ScalarProgram p;
  llvm::DenseMap<Value, int> reg;
  for (BlockArgument arg : block.getArguments())
    reg[arg] = p.numRegs++;
  auto regOf = [&](Value v) -> FailureOr<int> {
    auto it = reg.find(v);
    if (it != reg.end())
      return it->second;
    FailureOr<double> c = outer(v);
    if (failed(c))
      return failure();
    Instr in{Instr::Const};
    in.dst = p.numRegs++;
    in.imm = *c;
    p.code.push_back(in);
    reg[v] = in.dst;
    return in.dst;
  };
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Value v : op.getOperands()) {
        FailureOr<int> r = regOf(v);
        if (failed(r))
          return failure();
        p.yields.push_back(*r);
      }
      continue;
    }
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      FailureOr<double> v = constantValue(c);
      if (failed(v))
        return c.emitOpError("is not a scalar constant the reference evaluator "
                             "can use inside a body");
      Instr in{Instr::Const};
      in.dst = p.numRegs++;
      in.imm = *v;
      p.code.push_back(in);
      reg[c.getResult()] = in.dst;
      continue;
    }
    Instr in{};
    if (op.getNumResults() != 1 || !classify(&op, in))
      return op.emitOpError("is not supported by the reference evaluator");
    int *slots[3] = {&in.a, &in.b, &in.c};
    if (op.getNumOperands() > 3)
      return op.emitOpError("has more operands than the evaluator supports");
    for (auto [i, v] : llvm::enumerate(op.getOperands())) {
      FailureOr<int> r = regOf(v);
      if (failed(r))
        return failure();
      *slots[i] = *r;
    }
    in.dst = p.numRegs++;
    reg[op.getResult(0)] = in.dst;
    p.code.push_back(in);
  }
  return p;
}

static bool compareF(double a, double b, arith::CmpFPredicate p) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::AlwaysFalse: return false;
  case P::OEQ: return !unordered && a == b;
  case P::OGT: return !unordered && a > b;
  case P::OGE: return !unordered && a >= b;
  case P::OLT: return !unordered && a < b;
  case P::OLE: return !unordered && a <= b;
  case P::ONE: return !unordered && a != b;
  case P::ORD: return !unordered;
  case P::UEQ: return unordered || a == b;
  case P::UGT: return unordered || a > b;
  case P::UGE: return unordered || a >= b;
  case P::ULT: return unordered || a < b;
  case P::ULE: return unordered || a <= b;
  case P::UNE: return unordered || a != b;
  case P::UNO: return unordered;
  case P::AlwaysTrue: return true;
  }
  return false;
}

/// An integer of `bits` bits from any int64 value: its low bits, read
/// signed (i1: 0 or 1).
static int64_t wrapInt(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(v);
  v &= (uint64_t(1) << bits) - 1;
  if (bits > 1 && (v >> (bits - 1)) & 1)
    v |= ~((uint64_t(1) << bits) - 1);
  return static_cast<int64_t>(v);
}

/// The register value of an integer: its signed value (i1 true: -1) and its
/// unsigned one.
static int64_t signedOf(double v, unsigned bits) {
  auto i = static_cast<int64_t>(v);
  return bits == 1 ? -(i & 1) : wrapInt(static_cast<uint64_t>(i), bits);
}
static uint64_t unsignedOf(double v, unsigned bits) {
  auto u = static_cast<uint64_t>(static_cast<int64_t>(v));
  return bits >= 64 ? u : u & ((uint64_t(1) << bits) - 1);
}
static double intResult(uint64_t v, unsigned bits) {
  return static_cast<double>(wrapInt(v, bits));
}

static bool compareI(double a, double b, arith::CmpIPredicate p,
                     unsigned bits) {
  using P = arith::CmpIPredicate;
  int64_t sa = signedOf(a, bits), sb = signedOf(b, bits);
  uint64_t ua = unsignedOf(a, bits), ub = unsignedOf(b, bits);
  switch (p) {
  case P::eq: return ua == ub;
  case P::ne: return ua != ub;
  case P::slt: return sa < sb;
  case P::sle: return sa <= sb;
  case P::sgt: return sa > sb;
  case P::sge: return sa >= sb;
  case P::ult: return ua < ub;
  case P::ule: return ua <= ub;
  case P::ugt: return ua > ub;
  case P::uge: return ua >= ub;
  }
  return false;
}

/// `in` on operand values a, b, c (linalg.index is runBatch's: it knows
/// the points' loop indices).
static double apply(const Instr &in, double a, double b, double c) {
  unsigned n = in.bits;
  auto sa = [&] { return signedOf(a, n); };
  auto sb = [&] { return signedOf(b, n); };
  auto ua = [&] { return unsignedOf(a, n); };
  auto ub = [&] { return unsignedOf(b, n); };
  switch (in.op) {
  case Instr::Const: return in.imm;
  case Instr::Copy: return a;
  case Instr::Add: return a + b;
  case Instr::Sub: return a - b;
  case Instr::Mul: return a * b;
  case Instr::Div: return a / b;
  case Instr::Rem: return std::fmod(a, b);
  case Instr::Neg: return -a;
  case Instr::Maximum: return maximumF(a, b);
  case Instr::Minimum: return minimumF(a, b);
  case Instr::MaxNum: return std::fmax(a, b);
  case Instr::MinNum: return std::fmin(a, b);
  case Instr::CmpF:
    return compareF(a, b, static_cast<arith::CmpFPredicate>(int(in.imm)));
  case Instr::Select: return a != 0 ? b : c;
  case Instr::Trunc: return std::trunc(a);
  case Instr::Exp: return std::exp(a);
  case Instr::Exp2: return std::exp2(a);
  case Instr::Log: return std::log(a);
  case Instr::Log2: return std::log2(a);
  case Instr::Log1p: return std::log1p(a);
  case Instr::Expm1: return std::expm1(a);
  case Instr::Tanh: return std::tanh(a);
  case Instr::Sqrt: return std::sqrt(a);
  case Instr::Rsqrt: return 1.0 / std::sqrt(a);
  case Instr::Pow: return std::pow(a, b);
  case Instr::Abs: return std::fabs(a);
  case Instr::Erf: return std::erf(a);
  case Instr::Sin: return std::sin(a);
  case Instr::Cos: return std::cos(a);
  case Instr::Floor: return std::floor(a);
  case Instr::Ceil: return std::ceil(a);
  case Instr::Fma: return a * b + c;
  case Instr::Index: return NAN;
  // Integers. Division by zero (undefined in arith) gives 0, as does the
  // one signed overflow of a division (the minimum by -1); shifting by the
  // width or more (poison in arith) gives 0.
  case Instr::AddI: return intResult(ua() + ub(), n);
  case Instr::SubI: return intResult(ua() - ub(), n);
  case Instr::MulI: return intResult(ua() * ub(), n);
  case Instr::DivSI:
    if (sb() == 0 || (sb() == -1 && sa() == wrapInt(uint64_t(1) << (n - 1), n)))
      return 0;
    return intResult(static_cast<uint64_t>(sa() / sb()), n);
  case Instr::CeilDivSI:
  case Instr::FloorDivSI: {
    if (sb() == 0 || (sb() == -1 && sa() == wrapInt(uint64_t(1) << (n - 1), n)))
      return 0;
    int64_t q = sa() / sb();
    bool inexact = sa() % sb() != 0, positive = (sa() < 0) == (sb() < 0);
    if (inexact && in.op == Instr::CeilDivSI && positive)
      ++q;
    if (inexact && in.op == Instr::FloorDivSI && !positive)
      --q;
    return intResult(static_cast<uint64_t>(q), n);
  }
  case Instr::DivUI: return ub() == 0 ? 0 : intResult(ua() / ub(), n);
  case Instr::CeilDivUI:
    return ub() == 0 ? 0 : intResult(ua() / ub() + (ua() % ub() != 0), n);
  case Instr::RemSI:
    if (sb() == 0 || sb() == -1)
      return 0;
    return intResult(static_cast<uint64_t>(sa() % sb()), n);
  case Instr::RemUI: return ub() == 0 ? 0 : intResult(ua() % ub(), n);
  case Instr::MaxSI: return sa() >= sb() ? a : b;
  case Instr::MinSI: return sa() <= sb() ? a : b;
  case Instr::MaxUI: return ua() >= ub() ? a : b;
  case Instr::MinUI: return ua() <= ub() ? a : b;
  case Instr::CmpI:
    return compareI(a, b, static_cast<arith::CmpIPredicate>(int(in.imm)), n);
  case Instr::AndI: return intResult(ua() & ub(), n);
  case Instr::OrI: return intResult(ua() | ub(), n);
  case Instr::XorI: return intResult(ua() ^ ub(), n);
  case Instr::ShLI: return ub() >= n ? 0 : intResult(ua() << ub(), n);
  case Instr::ShRUI: return ub() >= n ? 0 : intResult(ua() >> ub(), n);
  case Instr::ShRSI:
    return ub() >= n ? 0 : intResult(static_cast<uint64_t>(sa() >> ub()), n);
  case Instr::ExtSI:
    return intResult(static_cast<uint64_t>(sa()), in.toBits);
  case Instr::ExtUI: return intResult(ua(), in.toBits);
  case Instr::TruncI: return intResult(ua(), in.toBits);
  case Instr::SIToFP: return static_cast<double>(sa());
  case Instr::UIToFP: return static_cast<double>(ua());
  }
  return NAN;
}

void ScalarProgram::runBatch(double *const *regs, int64_t width,
                             const int64_t *index, int dim) const {
  for (const Instr &in : code) {
    double *d = regs[in.dst];
    const double *a = regs[in.a], *b = regs[in.b], *c = regs[in.c];
    // The common float ops as loops the compiler can vectorise (the same
    // expression as apply's); the rest through apply, point by point.
    auto each = [&](auto f) {
      for (int64_t l = 0; l < width; ++l)
        d[l] = f(a[l], b[l], c[l]);
    };
    switch (in.op) {
    case Instr::Const: {
      double v = in.imm;
      each([v](double, double, double) { return v; });
      break;
    }
    case Instr::Copy: each([](double x, double, double) { return x; }); break;
    case Instr::Add:
      each([](double x, double y, double) { return x + y; });
      break;
    case Instr::Sub:
      each([](double x, double y, double) { return x - y; });
      break;
    case Instr::Mul:
      each([](double x, double y, double) { return x * y; });
      break;
    case Instr::Div:
      each([](double x, double y, double) { return x / y; });
      break;
    case Instr::Neg: each([](double x, double, double) { return -x; }); break;
    case Instr::Fma:
      each([](double x, double y, double z) { return x * y + z; });
      break;
    case Instr::Select:
      each([](double x, double y, double z) { return x != 0 ? y : z; });
      break;
    case Instr::CmpF: {
      // The common predicates as plain comparisons (compareF's results:
      // an ordered one is false, an unordered one true, with a NaN), so
      // that the loop vectorises; the others through compareF.
      using P = arith::CmpFPredicate;
      switch (static_cast<P>(int(in.imm))) {
      case P::OGT: each([](double x, double y, double) -> double { return x > y; }); break;
      case P::OGE: each([](double x, double y, double) -> double { return x >= y; }); break;
      case P::OLT: each([](double x, double y, double) -> double { return x < y; }); break;
      case P::OLE: each([](double x, double y, double) -> double { return x <= y; }); break;
      case P::OEQ: each([](double x, double y, double) -> double { return x == y; }); break;
      case P::UGT: each([](double x, double y, double) -> double { return !(x <= y); }); break;
      case P::UGE: each([](double x, double y, double) -> double { return !(x < y); }); break;
      case P::ULT: each([](double x, double y, double) -> double { return !(x >= y); }); break;
      case P::ULE: each([](double x, double y, double) -> double { return !(x > y); }); break;
      case P::UNE: each([](double x, double y, double) -> double { return x != y; }); break;
      default: {
        auto pred = static_cast<P>(int(in.imm));
        each([pred](double x, double y, double) -> double {
          return compareF(x, y, pred);
        });
      }
      }
      break;
    }
    case Instr::Maximum:
      each([](double x, double y, double) { return maximumF(x, y); });
      break;
    case Instr::Minimum:
      each([](double x, double y, double) { return minimumF(x, y); });
      break;
    case Instr::Index: {
      int64_t loop = int64_t(in.imm);
      double base = static_cast<double>(index[loop]);
      for (int64_t l = 0; l < width; ++l)
        d[l] = loop == dim ? static_cast<double>(index[loop] + l) : base;
      break;
    }
    default:
      for (int64_t l = 0; l < width; ++l)
        d[l] = apply(in, a[l], b[l], c[l]);
    }
  }
}

int ScalarProgram::sumTermRegister(int out) const {
  if (yields.size() != 1 || out <= 0 || yields[0] == out)
    return -1;
  int term = -1;
  for (const Instr &in : code) {
    bool reads = in.a == out || in.b == out || in.c == out;
    if (in.dst == yields[0]) {
      if (in.op != Instr::Add || (in.a == out) == (in.b == out) ||
          in.c == out)
        return -1;
      term = in.a == out ? in.b : in.a;
    } else if (reads || in.dst == out) {
      // (An unused operand field is register 0, a block argument that is
      // no output: `out` > 0 is never mistaken for one.)
      return -1;
    }
  }
  return term;
}

FailureOr<double> ScalarProgram::evaluateOp(Operation *op,
                                            ArrayRef<double> operands) {
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    FailureOr<double> v = constantValue(c);
    if (failed(v))
      return op->emitOpError("is not a scalar constant");
    return *v;
  }
  Instr in{};
  if (op->getNumResults() != 1 || !classify(op, in) ||
      in.op == Instr::Index || operands.size() > 3)
    return op->emitOpError("is not supported by the reference evaluator");
  double v[3] = {0, 0, 0};
  for (auto [i, x] : llvm::enumerate(operands))
    v[i] = x;
  return apply(in, v[0], v[1], v[2]);
}
