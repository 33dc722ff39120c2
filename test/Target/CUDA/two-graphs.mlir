// RUN: gnn-translate --gnn-to-program %s -split-input-file -verify-diagnostics
// RUN: gnn-translate --gnn-to-cuda %s -split-input-file -verify-diagnostics

// A Program binds one graph and every kernel indexes it: a function of two
// graphs was lowered as if they were one (the gather's sources and the
// reduce's destinations taken from whichever graph the run was given), a
// silent wrong answer. It is refused, as gnn-run's reference refuses it.
// expected-error @+1 {{expects exactly one !gnn.graph argument but got 2 (the CUDA backend runs a function on one graph)}}
func.func @f(%g1: !gnn.graph,
             // expected-note @+1 {{argument #1 is another graph}}
             %g2: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %e = gnn.gather src %g1, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %r = gnn.reduce sum %g2, %e : tensor<?x8xf32> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
