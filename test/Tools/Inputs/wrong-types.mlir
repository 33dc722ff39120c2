// spmm aggregates node rows; an edge tensor is the wrong kind of operand.
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %0 = gnn.spmm sum %g, %e : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
