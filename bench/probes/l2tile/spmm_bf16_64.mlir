// out[v] = sum_u w_uv x[u], F = 64: one feature tile of the scoreboard's spmm-sum (F = 128)
func.func @spmm_sum(%g: !gnn.graph, %x: tensor<?x64xbf16>, %w: tensor<?xbf16> {gnn.domain = "edge"}) -> tensor<?x64xbf16> {
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xbf16>) : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}
