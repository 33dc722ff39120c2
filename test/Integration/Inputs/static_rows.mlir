// A function written for graphs of 7 nodes (static leading dimensions).
func.func @static_rows(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<7x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<7x8xf32>
  return %0 : tensor<7x8xf32>
}
