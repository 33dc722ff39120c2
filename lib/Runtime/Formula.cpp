//===- Formula.cpp - integer size formulas --------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Formula.h"

#include <cassert>
#include <cctype>

using namespace gnn::runtime;

/// The names, by Op::Name value: 0 to 5, then src_nodes and dst_nodes.
static const char *const kNames[] = {"nodes",          "edges",
                                     "graphs",         "max_in_degree",
                                     "max_out_degree", "largest_graph"};
static constexpr int64_t kSrcNodes = 6, kDstNodes = 7;

/// What a name is: its Op::Name value, or a reason it is none.
struct NameLookup {
  int64_t index = -1;
  std::string error;
};

static NameLookup lookUpName(const std::string &name) {
  for (int64_t i = 0; i < 6; ++i)
    if (name == kNames[i])
      return {i, ""};
  if (name == "src_nodes")
    return {kSrcNodes, ""};
  if (name == "dst_nodes")
    return {kDstNodes, ""};
  return {-1, "unknown name '" + name +
                  "' (expected nodes, edges, graphs, max_in_degree, "
                  "max_out_degree, largest_graph, src_nodes, dst_nodes, "
                  "ceil_div, min, max)"};
}

namespace gnn {
namespace runtime {

/// Recursive-descent parser producing postfix code.
struct FormulaParser {
  const std::string &text;
  size_t pos = 0;
  Formula out;
  std::string error;
  /// Parentheses (and calls) open around the current position.
  int depth = 0;

  void skip() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool fail(const std::string &what) {
    if (error.empty())
      error = "in formula '" + text + "' at offset " + std::to_string(pos) +
              ": " + what;
    return false;
  }
  bool eat(char c) {
    skip();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  void emit(Formula::Op::Kind k, int64_t v = 0) { out.code.push_back({k, v}); }

  bool expr() {
    if (!term())
      return false;
    while (true) {
      if (eat('+')) {
        if (!term())
          return false;
        emit(Formula::Op::Add);
        outermost(Formula::Precedence::Sum);
      } else if (eat('-')) {
        if (!term())
          return false;
        emit(Formula::Op::Sub);
        outermost(Formula::Precedence::Sum);
      } else {
        return true;
      }
    }
  }
  bool term() {
    if (!factor())
      return false;
    while (true) {
      Formula::Op::Kind k;
      if (eat('*'))
        k = Formula::Op::Mul;
      else if (eat('/'))
        k = Formula::Op::Div;
      else if (eat('%'))
        k = Formula::Op::Mod;
      else
        return true;
      if (!factor())
        return false;
      emit(k);
      outermost(Formula::Precedence::Product);
    }
  }
  /// Records an operator of `p` outside every parenthesis.
  void outermost(Formula::Precedence p) {
    if (depth == 0 && p < out.precedence)
      out.precedence = p;
  }
  bool factor() {
    skip();
    if (pos >= text.size())
      return fail("expected a number, a name or '(' but found the end");
    char c = text[pos];
    bool negative = c == '-' && pos + 1 < text.size() &&
                    std::isdigit(static_cast<unsigned char>(text[pos + 1]));
    if (negative || std::isdigit(static_cast<unsigned char>(c))) {
      pos += negative;
      int64_t v = 0;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
        if (v > (INT64_MAX - 9) / 10)
          return fail("integer too large");
        v = v * 10 + (text[pos++] - '0');
      }
      emit(Formula::Op::Push, negative ? -v : v);
      return true;
    }
    if (eat('(')) {
      ++depth;
      if (!expr())
        return false;
      --depth;
      return eat(')') || fail("expected ')'");
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos;
      while (pos < text.size() && (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_'))
        ++pos;
      std::string name = text.substr(start, pos - start);
      NameLookup n = lookUpName(name);
      if (n.index >= 0) {
        emit(Formula::Op::Name, n.index);
        return true;
      }
      Formula::Op::Kind k;
      if (name == "ceil_div")
        k = Formula::Op::CeilDiv;
      else if (name == "min")
        k = Formula::Op::Min;
      else if (name == "max")
        k = Formula::Op::Max;
      else
        return fail(n.error);
      ++depth;
      if (!eat('(') || !expr() || !eat(',') || !expr() || !eat(')'))
        return fail("expected '" + name + "(a, b)'");
      --depth;
      emit(k);
      return true;
    }
    return fail(std::string("unexpected character '") + c + "'");
  }
};

} // namespace runtime
} // namespace gnn

StatusOr<Formula> Formula::parse(const std::string &text) {
  FormulaParser p{text};
  if (!p.expr())
    return Status::error(p.error);
  p.skip();
  if (p.pos != text.size()) {
    p.fail("unexpected text after the formula");
    return Status::error(p.error);
  }
  p.out.source = text;
  return p.out;
}

Formula Formula::constant(int64_t v) {
  Formula f;
  f.code.push_back({Op::Push, v});
  f.source = std::to_string(v);
  return f;
}

Formula Formula::nameAt(int64_t index) {
  Formula f;
  f.code.push_back({Op::Name, index});
  f.source = index < kSrcNodes    ? kNames[index]
             : index == kSrcNodes ? "src_nodes"
                                  : "dst_nodes";
  return f;
}

Formula Formula::nodes() { return nameAt(0); }
Formula Formula::edges() { return nameAt(1); }
Formula Formula::graphs() { return nameAt(2); }
Formula Formula::maxInDegree() { return nameAt(3); }
Formula Formula::maxOutDegree() { return nameAt(4); }
Formula Formula::largestGraph() { return nameAt(5); }

StatusOr<Formula> Formula::name(const std::string &name) {
  NameLookup n = lookUpName(name);
  if (n.index < 0)
    return Status::error(n.error);
  return nameAt(n.index);
}

Formula Formula::infix(Op::Kind kind, Formula a, const Formula &b) {
  assert(!a.code.empty() && !b.code.empty() &&
         "a formula's operands are formulas");
  Precedence p = kind == Op::Add || kind == Op::Sub ? Precedence::Sum
                                                    : Precedence::Product;
  const char *symbol = kind == Op::Add   ? " + "
                       : kind == Op::Sub ? " - "
                       : kind == Op::Mul ? " * "
                       : kind == Op::Div ? " / "
                                         : " % ";
  // Left-associative: the left operand needs parentheses when it binds more
  // loosely, the right one also when it binds as tightly (a - (b - c)).
  std::string left = a.precedence < p ? "(" + a.source + ")" : a.source;
  std::string right = b.precedence <= p ? "(" + b.source + ")" : b.source;
  a.code.insert(a.code.end(), b.code.begin(), b.code.end());
  a.code.push_back({kind, 0});
  a.source = left + symbol + right;
  a.precedence = p;
  return a;
}

Formula Formula::call(Op::Kind kind, Formula a, const Formula &b) {
  assert(!a.code.empty() && !b.code.empty() &&
         "a formula's operands are formulas");
  const char *fn = kind == Op::CeilDiv ? "ceil_div"
                   : kind == Op::Min   ? "min"
                                       : "max";
  a.code.insert(a.code.end(), b.code.begin(), b.code.end());
  a.code.push_back({kind, 0});
  a.source = std::string(fn) + "(" + a.source + ", " + b.source + ")";
  a.precedence = Precedence::Atom;
  return a;
}

Formula Formula::ceilDiv(Formula a, const Formula &b) {
  return call(Op::CeilDiv, std::move(a), b);
}
Formula Formula::min(Formula a, const Formula &b) {
  return call(Op::Min, std::move(a), b);
}
Formula Formula::max(Formula a, const Formula &b) {
  return call(Op::Max, std::move(a), b);
}

Formula Formula::parenthesized(Formula f) {
  f.source = "(" + f.source + ")";
  f.precedence = Precedence::Atom;
  return f;
}

namespace gnn {
namespace runtime {
Formula operator+(Formula a, const Formula &b) {
  return Formula::infix(Formula::Op::Add, std::move(a), b);
}
Formula operator-(Formula a, const Formula &b) {
  return Formula::infix(Formula::Op::Sub, std::move(a), b);
}
Formula operator*(Formula a, const Formula &b) {
  return Formula::infix(Formula::Op::Mul, std::move(a), b);
}
Formula operator/(Formula a, const Formula &b) {
  return Formula::infix(Formula::Op::Div, std::move(a), b);
}
Formula operator%(Formula a, const Formula &b) {
  return Formula::infix(Formula::Op::Mod, std::move(a), b);
}
} // namespace runtime
} // namespace gnn

bool Formula::isConstant() const {
  for (const Op &op : code)
    if (op.kind == Op::Name)
      return false;
  return true;
}

StatusOr<int64_t> Formula::evaluate(const FormulaScope &scope) const {
  int64_t stack[32];
  int top = 0;
  const int64_t names[] = {scope.nodes,       scope.edges,
                           scope.graphs,      scope.maxInDegree,
                           scope.maxOutDegree, scope.largestGraph};
  if (code.empty())
    return Status::error("empty formula");
  for (const Op &op : code) {
    if (op.kind == Op::Push || op.kind == Op::Name) {
      if (top == 32)
        return Status::error("formula '" + source + "' is nested too deeply");
      stack[top++] = op.kind == Op::Push    ? op.value
                     : op.value < kSrcNodes  ? names[op.value]
                     : op.value == kSrcNodes ? scope.sourceNodes()
                                             : scope.destinationNodes();
      continue;
    }
    int64_t b = stack[--top], a = stack[top - 1], r = 0;
    // Sizes come from graphs and user IR: a product that wraps would
    // allocate a small buffer for a large tensor.
    bool overflow = false;
    switch (op.kind) {
    case Op::Add: overflow = __builtin_add_overflow(a, b, &r); break;
    case Op::Sub: overflow = __builtin_sub_overflow(a, b, &r); break;
    case Op::Mul: overflow = __builtin_mul_overflow(a, b, &r); break;
    case Op::Div:
    case Op::Mod:
    case Op::CeilDiv:
      if (b == 0)
        return Status::error("division by zero in formula '" + source + "'");
      if (a == INT64_MIN && b == -1) {
        overflow = true;
        break;
      }
      if (op.kind == Op::CeilDiv) {
        overflow = __builtin_add_overflow(a, b - 1, &r);
        r = overflow ? 0 : r / b;
      } else {
        r = op.kind == Op::Div ? a / b : a % b;
      }
      break;
    case Op::Min: r = a < b ? a : b; break;
    case Op::Max: r = a > b ? a : b; break;
    default: break;
    }
    if (overflow)
      return Status::error("formula '" + source + "' overflows 64 bits at " +
                           std::to_string(a) + " and " + std::to_string(b));
    stack[top - 1] = r;
  }
  return stack[0];
}
