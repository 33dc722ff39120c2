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
///   factor := '-'? integer | name | '(' expr ')' | fn '(' expr ',' expr ')'
///   fn := ceil_div | min | max
///   name := nodes | edges | graphs | max_in_degree | max_out_degree |
///           largest_graph | src_nodes | dst_nodes
/// (`src_nodes`, `dst_nodes`: a bipartite graph's source and destination
/// nodes, both `nodes` on a graph of one node set.)
/// Integer arithmetic on int64 (`/` and `%` truncate like C); division by
/// zero is an evaluation error.
///
/// The compiler builds formulas with the builders below (constants, names,
/// operators); parse() is for the text of a Program file or of a person.
/// A built formula prints with parentheses only where precedence needs
/// them, so that parse(f.text()) reads the same formula back.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_FORMULA_H
#define GNN_RUNTIME_FORMULA_H

#include "gnn/Runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnn {
namespace runtime {

/// Values of the names a formula may use.
struct FormulaScope {
  int64_t nodes = 0, edges = 0, graphs = 1, maxInDegree = 0, maxOutDegree = 0,
          largestGraph = 0;
  /// A bipartite graph's sides (`nodes` is the larger); -1: `nodes`.
  int64_t srcNodes = -1, dstNodes = -1;

  int64_t sourceNodes() const { return srcNodes >= 0 ? srcNodes : nodes; }
  int64_t destinationNodes() const { return dstNodes >= 0 ? dstNodes : nodes; }
};

/// A formula, evaluated without re-parsing.
class Formula {
public:
  Formula() = default;
  /// Parses `text`; errors name the position. The text is kept as it is.
  static StatusOr<Formula> parse(const std::string &text);

  /// A constant.
  static Formula constant(int64_t v);
  /// The graph's sizes.
  static Formula nodes();
  static Formula edges();
  static Formula graphs();
  static Formula maxInDegree();
  static Formula maxOutDegree();
  static Formula largestGraph();
  /// The name `name` of the grammar (nodes, edges, ..., dst_nodes);
  /// an error naming the known names for any other.
  static StatusOr<Formula> name(const std::string &name);
  /// ceil_div(a, b), min(a, b), max(a, b).
  static Formula ceilDiv(Formula a, const Formula &b);
  static Formula min(Formula a, const Formula &b);
  static Formula max(Formula a, const Formula &b);
  /// `f` printed in parentheses, whatever the precedence: the same value.
  static Formula parenthesized(Formula f);
  /// a + b, a - b, a * b, a / b, a % b.
  friend Formula operator+(Formula a, const Formula &b);
  friend Formula operator-(Formula a, const Formula &b);
  friend Formula operator*(Formula a, const Formula &b);
  friend Formula operator/(Formula a, const Formula &b);
  friend Formula operator%(Formula a, const Formula &b);

  StatusOr<int64_t> evaluate(const FormulaScope &scope) const;
  /// The text: as parsed, or as the builders print it.
  const std::string &text() const { return source; }
  bool isConstant() const;

private:
  struct Op {
    enum Kind : uint8_t { Push, Name, Add, Sub, Mul, Div, Mod, CeilDiv, Min, Max };
    Kind kind;
    int64_t value;
  };
  /// How tightly the text's outermost operator binds: a sum (+, -), a
  /// product (*, /, %), or an atom (a number, a name, a call, parentheses).
  enum class Precedence : uint8_t { Sum, Product, Atom };
  static Formula nameAt(int64_t index);
  static Formula infix(Op::Kind kind, Formula a, const Formula &b);
  static Formula call(Op::Kind kind, Formula a, const Formula &b);

  std::vector<Op> code;
  std::string source;
  Precedence precedence = Precedence::Atom;
  friend struct FormulaParser;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_FORMULA_H
