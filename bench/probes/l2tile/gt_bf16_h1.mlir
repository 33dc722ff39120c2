// alpha = softmax_v(q[v] . k[u] * s); out[v] = sum_u alpha v[u]  (H = 1, D = 32, s = 1/sqrt(32))
#e2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gt(%g: !gnn.graph, %q: tensor<?x1x32xbf16>, %k: tensor<?x1x32xbf16>, %v: tensor<?x1x32xbf16>) -> tensor<?x1x32xbf16> {
  %c0 = arith.constant 0 : index
  %scale = arith.constant 0.17677669 : bf16
  %raw = gnn.sddmm dot %g, %k, %q : tensor<?x1x32xbf16>, tensor<?x1x32xbf16> -> tensor<?x1xbf16>
  %ne = tensor.dim %raw, %c0 : tensor<?x1xbf16>
  %se = tensor.empty(%ne) : tensor<?x1xbf16>
  %score = linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%raw : tensor<?x1xbf16>) outs(%se : tensor<?x1xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.mulf %a, %scale : bf16
    linalg.yield %m : bf16
  } -> tensor<?x1xbf16>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x1xbf16>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x1xbf16>) : tensor<?x1x32xbf16> -> tensor<?x1x32xbf16>
  return %agg : tensor<?x1x32xbf16>
}
