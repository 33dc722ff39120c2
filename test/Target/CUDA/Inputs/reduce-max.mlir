// Input of ../reduce-vector-loads.test: a reduce max over edge values.
func.func @rmax(%g: !gnn.graph, %e: tensor<?x128xf32> {gnn.differentiable, gnn.domain = "edge"}) -> tensor<?x128xf32> {
  %y = gnn.reduce max %g, %e : tensor<?x128xf32> -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}
