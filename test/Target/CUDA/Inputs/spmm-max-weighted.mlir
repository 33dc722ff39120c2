// y[v] = max over edges u -> v of w[e] * x[u]: the weighted max, whose
// backward compares each edge's value with the maximum (F = 128).
func.func @wmax(%g: !gnn.graph, %x: tensor<?x128xf32> {gnn.differentiable},
                %w: tensor<?xf32> {gnn.differentiable, gnn.domain = "edge"})
    -> tensor<?x128xf32> {
  %o = gnn.spmm max %g, %x weights(%w : tensor<?xf32>)
      : tensor<?x128xf32> -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
