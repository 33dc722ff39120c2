// Input of ../reduce-vector-loads.test: an sddmm mul, whose gradient for
// `a` sums dy[e] * b[dst(e)] over the edges leaving each node.
func.func @m(%g: !gnn.graph, %a: tensor<?x128xf32> {gnn.differentiable}, %b: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %s = gnn.sddmm mul %g, %a, %b : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  return %s : tensor<?x128xf32>
}
