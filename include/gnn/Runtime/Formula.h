//===- Formula.h - integer size formulas --------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Sizes and grids in a Program are formulas of the graph's sizes, e.g.
/// `nodes * 64` or `ceil_div(edges, 256)`. Grammar:
///   expr := term (('+' | '-') term)*
///   term := factor (('*' | '/' | '%') factor)*
///   factor := integer | name | '(' expr ')' | fn '(' expr ',' expr ')'
///   fn := ceil_div | min | max
///   name := nodes | edges | graphs | max_in_degree | max_out_degree |
///           largest_graph | csr_light_<j> | csc_light_<j>
/// (`csr_light_<j>`, 0 <= j < 64: the nodes of in-degree at most 2^j;
/// `csc_light_<j>` the same by out-degree.)
/// Integer arithmetic on int64; division by zero is an evaluation error.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_FORMULA_H
#define GNN_RUNTIME_FORMULA_H

#include "gnn/Runtime/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gnn {
namespace runtime {

/// Values of the names a formula may use.
struct FormulaScope {
  int64_t nodes = 0, edges = 0, graphs = 1, maxInDegree = 0, maxOutDegree = 0,
          largestGraph = 0;
  /// csr_light_<j> and csc_light_<j>.
  std::array<int64_t, 64> csrLight{}, cscLight{};
};

/// A parsed formula, evaluated without re-parsing.
class Formula {
public:
  Formula() = default;
  /// Parses `text`; errors name the position.
  static StatusOr<Formula> parse(const std::string &text);
  /// A constant.
  static Formula constant(int64_t v);

  StatusOr<int64_t> evaluate(const FormulaScope &scope) const;
  const std::string &text() const { return source; }
  bool isConstant() const;

private:
  struct Op {
    enum Kind : uint8_t { Push, Name, Add, Sub, Mul, Div, Mod, CeilDiv, Min, Max };
    Kind kind;
    int64_t value;
  };
  std::vector<Op> code;
  std::string source;
  friend struct FormulaParser;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_FORMULA_H
