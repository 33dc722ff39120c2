// Same signature as the GCN example but 32 input features.
func.func @f(%g: !gnn.graph, %x: tensor<?x32xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<?x32xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<?x32xf32> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}
