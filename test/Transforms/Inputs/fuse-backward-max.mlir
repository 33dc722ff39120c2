// out[v] = max_u x[u]   (the peer bench's max, F = 128)
func.func @max(%g: !gnn.graph, %x: tensor<?x128xf32> {gnn.differentiable}) -> tensor<?x128xf32> {
  %o = gnn.spmm max %g, %x : tensor<?x128xf32> -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
