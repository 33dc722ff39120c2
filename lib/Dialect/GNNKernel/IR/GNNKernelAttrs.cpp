//===- GNNKernelAttrs.cpp - gnnk dialect attributes -----------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNNKernel/IR/GNNKernelAttrs.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelDialect.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gnnk;

#define GET_ATTRDEF_CLASSES
#include "gnn/Dialect/GNNKernel/IR/GNNKernelAttrs.cpp.inc"

void GNNKDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnn/Dialect/GNNKernel/IR/GNNKernelAttrs.cpp.inc"
      >();
}

bool mlir::gnnk::isFormulaName(StringRef name) {
  return isSizeName(name) || name == "max_in_degree" ||
         name == "max_out_degree" || name == "largest_graph";
}

/// The keywords of a formula's operators, indexed by FormulaKind.
static constexpr llvm::StringLiteral kOperators[] = {
    "", "", "add", "sub", "mul", "div", "mod", "ceil_div", "min", "max"};

static bool isOperator(FormulaKind kind) {
  return kind != FormulaKind::Constant && kind != FormulaKind::Name;
}

LogicalResult FormulaAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  FormulaKind kind, int64_t value,
                                  StringAttr name,
                                  ArrayRef<FormulaAttr> operands) {
  if (kind > FormulaKind::Max)
    return emitError() << "expects a formula kind but got "
                       << static_cast<uint32_t>(kind);
  if (kind == FormulaKind::Name && (!name || !isFormulaName(name.getValue())))
    return emitError()
           << "expects a formula name (nodes, edges, graphs, src_nodes, "
              "dst_nodes, max_in_degree, max_out_degree or largest_graph) "
              "but got "
           << name;
  if (kind != FormulaKind::Name && name)
    return emitError() << "expects a name only on a name leaf of a formula";
  if (kind != FormulaKind::Constant && value != 0)
    return emitError() << "expects a value only on a constant of a formula";
  size_t expected = isOperator(kind) ? 2 : 0;
  if (operands.size() != expected || llvm::is_contained(operands, nullptr))
    return emitError() << "expects " << expected << " operand formulas but got "
                       << operands.size();
  return success();
}

/// formula := integer | name | op '(' formula ',' formula ')'
static FormulaAttr parseFormula(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  int64_t value = 0;
  OptionalParseResult integer = parser.parseOptionalInteger(value);
  if (integer.has_value())
    return succeeded(*integer) ? FormulaAttr::get(ctx, value) : FormulaAttr();
  StringRef keyword;
  if (failed(parser.parseKeyword(&keyword)))
    return FormulaAttr();
  const StringLiteral *op = llvm::find(kOperators, keyword);
  if (keyword.empty() || op == std::end(kOperators)) {
    auto emit = [&] { return parser.emitError(loc); };
    if (failed(FormulaAttr::verify(emit, FormulaKind::Name, 0,
                                   StringAttr::get(ctx, keyword), {})))
      return FormulaAttr();
    return FormulaAttr::get(ctx, keyword);
  }
  auto kind = static_cast<FormulaKind>(op - std::begin(kOperators));
  FormulaAttr lhs, rhs;
  if (parser.parseLParen() || !(lhs = parseFormula(parser)) ||
      parser.parseComma() || !(rhs = parseFormula(parser)) ||
      parser.parseRParen())
    return FormulaAttr();
  return FormulaAttr::get(kind, lhs, rhs);
}

Attribute FormulaAttr::parse(AsmParser &parser, Type) {
  FormulaAttr f;
  if (parser.parseLess() || !(f = parseFormula(parser)) ||
      parser.parseGreater())
    return {};
  return f;
}

static void printFormula(AsmPrinter &printer, FormulaAttr f) {
  switch (f.getKind()) {
  case FormulaKind::Constant:
    printer << f.getValue();
    return;
  case FormulaKind::Name:
    printer << f.getName().getValue();
    return;
  default:
    printer << kOperators[static_cast<unsigned>(f.getKind())] << "(";
    printFormula(printer, f.getOperands()[0]);
    printer << ", ";
    printFormula(printer, f.getOperands()[1]);
    printer << ")";
  }
}

void FormulaAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printFormula(printer, *this);
  printer << ">";
}
