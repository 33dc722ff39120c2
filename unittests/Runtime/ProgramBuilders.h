//===- ProgramBuilders.h - hand-written Program steps in tests ----*- C++
//-*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
//
// Tests write Programs by hand (the runtime's own tests have no compiler):
// a launch of a one-dimensional grid and its arguments, one call each.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_UNITTESTS_RUNTIME_PROGRAMBUILDERS_H
#define GNN_UNITTESTS_RUNTIME_PROGRAMBUILDERS_H

#include "gnn/Runtime/Program.h"

#include <string>

namespace gnn {
namespace runtime {
namespace test {

/// A formula from text the test wrote (it must parse).
inline Formula formula(const char *text) { return *Formula::parse(text); }

/// A launch of `kernel` on a grid of `grid` blocks of `block` threads, no
/// dynamic shared memory, no arguments yet.
inline LaunchStep launch(std::string kernel, const char *grid, unsigned block) {
  LaunchStep l;
  l.kernel = std::move(kernel);
  l.grid[0] = formula(grid);
  l.grid[1] = formula("1");
  l.grid[2] = formula("1");
  l.block[0] = block;
  l.sharedBytes = formula("0");
  return l;
}

/// An argument naming a buffer or a graph array.
inline KernelArg named(KernelArg::Kind kind, std::string name) {
  KernelArg a;
  a.kind = kind;
  a.name = std::move(name);
  return a;
}

/// An integer argument (I32 or I64) given by a formula.
inline KernelArg integer(KernelArg::Kind kind, const char *value) {
  KernelArg a;
  a.kind = kind;
  a.integer = formula(value);
  return a;
}

/// A weight gradient c = aᵀ b (m x n, summed over the graph's `k` rows)
/// with the row split: `partials` in `chunks` slices (empty: through
/// cuBLAS).
inline GemmStep weightGradient(std::string a, std::string b, std::string c,
                               int64_t m, int64_t n, const char *k,
                               std::string partials, int64_t chunks) {
  GemmStep g;
  g.a = std::move(a);
  g.b = std::move(b);
  g.c = std::move(c);
  g.m = Formula::constant(m);
  g.n = Formula::constant(n);
  g.k = formula(k);
  g.transA = true;
  g.partials = std::move(partials);
  if (!g.partials.empty())
    g.chunks = Formula::constant(chunks);
  return g;
}

} // namespace test
} // namespace runtime
} // namespace gnn

#endif // GNN_UNITTESTS_RUNTIME_PROGRAMBUILDERS_H
