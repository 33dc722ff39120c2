// out[v] = sum_u w_uv x[u], F = 32: one feature tile of the scoreboard's spmm-sum (F = 128)
func.func @spmm_sum(%g: !gnn.graph, %x: tensor<?x32xbf16>, %w: tensor<?xbf16> {gnn.domain = "edge"}) -> tensor<?x32xbf16> {
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xbf16>) : tensor<?x32xbf16> -> tensor<?x32xbf16>
  return %o : tensor<?x32xbf16>
}
