// An edge-weighted sum and an edge result: both cross the Program's boundary.
func.func @weighted(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<?xf32> {gnn.domain = "edge"}) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xf32>) : tensor<?x8xf32> -> tensor<?x8xf32>
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %o, %e : tensor<?x8xf32>, tensor<?x8xf32>
}
