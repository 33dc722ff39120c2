// A function written for a graph of exactly 5 nodes.
func.func @f(%g: !gnn.graph, %x: tensor<5x8xf32> {gnn.domain = "node"}) -> tensor<5x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<5x8xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}
