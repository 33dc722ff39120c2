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

/// Maps an op to its opcode and arity; returns false for unsupported ops.
static bool classify(Operation *op, Instr::Opcode &code, double &imm) {
  imm = 0;
  bool ok = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case<arith::AddFOp, arith::AddIOp>([&](auto) { code = Instr::Add; })
      .Case<arith::SubFOp, arith::SubIOp>([&](auto) { code = Instr::Sub; })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) { code = Instr::Mul; })
      .Case<arith::DivFOp>([&](auto) { code = Instr::Div; })
      .Case<arith::DivSIOp, arith::DivUIOp>([&](auto) { code = Instr::IDiv; })
      .Case<arith::RemFOp, arith::RemSIOp, arith::RemUIOp>(
          [&](auto) { code = Instr::Rem; })
      .Case<arith::NegFOp>([&](auto) { code = Instr::Neg; })
      .Case<arith::MaximumFOp>([&](auto) { code = Instr::Maximum; })
      .Case<arith::MinimumFOp>([&](auto) { code = Instr::Minimum; })
      .Case<arith::MaxNumFOp, arith::MaxSIOp, arith::MaxUIOp>(
          [&](auto) { code = Instr::MaxNum; })
      .Case<arith::MinNumFOp, arith::MinSIOp, arith::MinUIOp>(
          [&](auto) { code = Instr::MinNum; })
      .Case<arith::CmpFOp>([&](arith::CmpFOp c) {
        code = Instr::CmpF;
        imm = static_cast<double>(c.getPredicate());
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
        code = Instr::CmpI;
        imm = static_cast<double>(c.getPredicate());
      })
      .Case<arith::SelectOp>([&](auto) { code = Instr::Select; })
      .Case<arith::AndIOp>([&](auto) { code = Instr::And; })
      .Case<arith::OrIOp>([&](auto) { code = Instr::Or; })
      .Case<arith::XOrIOp>([&](auto) { code = Instr::Xor; })
      // Precision changes are exact in the double-precision reference.
      .Case<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
            arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp>(
          [&](auto) { code = Instr::Copy; })
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
        imm = static_cast<double>(i.getDim());
      })
      .Default([&](Operation *) { ok = false; });
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
    if (op.getNumResults() != 1 || !classify(&op, in.op, in.imm))
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

static bool compareI(double a, double b, arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::eq: return a == b;
  case P::ne: return a != b;
  case P::slt: case P::ult: return a < b;
  case P::sle: case P::ule: return a <= b;
  case P::sgt: case P::ugt: return a > b;
  case P::sge: case P::uge: return a >= b;
  }
  return false;
}

static double apply(const Instr &in, double a, double b, double c,
                    const int64_t *index) {
  switch (in.op) {
  case Instr::Const: return in.imm;
  case Instr::Copy: return a;
  case Instr::Add: return a + b;
  case Instr::Sub: return a - b;
  case Instr::Mul: return a * b;
  case Instr::Div: return a / b;
  case Instr::IDiv: return b == 0 ? 0 : std::trunc(a / b);
  case Instr::Rem: return std::fmod(a, b);
  case Instr::Neg: return -a;
  case Instr::Maximum: return maximumF(a, b);
  case Instr::Minimum: return minimumF(a, b);
  case Instr::MaxNum: return std::fmax(a, b);
  case Instr::MinNum: return std::fmin(a, b);
  case Instr::CmpF:
    return compareF(a, b, static_cast<arith::CmpFPredicate>(int(in.imm)));
  case Instr::CmpI:
    return compareI(a, b, static_cast<arith::CmpIPredicate>(int(in.imm)));
  case Instr::Select: return a != 0 ? b : c;
  case Instr::And: return (a != 0) && (b != 0);
  case Instr::Or: return (a != 0) || (b != 0);
  case Instr::Xor: return (a != 0) != (b != 0);
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
  case Instr::Index: return index ? static_cast<double>(index[int(in.imm)]) : 0;
  }
  return NAN;
}

void ScalarProgram::run(double *regs, const int64_t *index) const {
  for (const Instr &in : code)
    regs[in.dst] = apply(in, regs[in.a], regs[in.b], regs[in.c], index);
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
  if (op->getNumResults() != 1 || !classify(op, in.op, in.imm) ||
      in.op == Instr::Index || operands.size() > 3)
    return op->emitOpError("is not supported by the reference evaluator");
  double v[3] = {0, 0, 0};
  for (auto [i, x] : llvm::enumerate(operands))
    v[i] = x;
  return apply(in, v[0], v[1], v[2], nullptr);
}
