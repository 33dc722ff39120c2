func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<524288x524288xf32>) -> tensor<?x8xf32> {
  %r = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
