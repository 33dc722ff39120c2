// RUN: gnn-translate --gnn-to-program %s -verify-diagnostics

// A function with nothing left to lower goes straight to the Program
// builder, which refuses two graphs too.
// expected-error @+1 {{expects exactly one !gnn.graph argument but got 3}}
func.func @f(%g1: !gnn.graph,
             // expected-note @+1 {{argument #1 is another graph}}
             %g2: !gnn.graph<bipartite>, %g3: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
