// Attention weights weighting a max aggregation (session 37's autodiff fix:
// the weights are kept from the forward, not made again).
func.func @softmax_max(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %s = gnn.sddmm dot %g, %x, %x : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?xf32>
  %y = gnn.spmm max %g, %x weights(%a : tensor<?xf32>) : tensor<?x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
