func.func @a(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
func.func @b(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = gnn.spmm max %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
