// out[v] = sum_u w_uv x[u], F = 32: one feature tile of the scoreboard's spmm-sum (F = 128)
func.func @spmm_sum(%g: !gnn.graph, %x: tensor<?x32xf32>, %w: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<?x32xf32> {
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xf32>) : tensor<?x32xf32> -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}
