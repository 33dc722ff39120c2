// An op the gnn dialect does not have.
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = arith.constant 0 : index
  %0 = gnn.scatter %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
