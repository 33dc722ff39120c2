// alpha = softmax_v(att . leaky(xl[v] + xr[u])); out[v] = sum_u alpha xr[u]  (H = 1, D = 32)
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gatv2(%g: !gnn.graph, %xl: tensor<?x1x32xbf16>, %xr: tensor<?x1x32xbf16>, %att: tensor<1x32xbf16>) -> tensor<?x1x32xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %slope = arith.constant 0.2 : bf16
  %e = gnn.sddmm add %g, %xr, %xl : tensor<?x1x32xbf16>, tensor<?x1x32xbf16> -> tensor<?x1x32xbf16>
  %ne = tensor.dim %e, %c0 : tensor<?x1x32xbf16>
  %sempty = tensor.empty(%ne) : tensor<?x1xbf16>
  %szero = linalg.fill ins(%zero : bf16) outs(%sempty : tensor<?x1xbf16>) -> tensor<?x1xbf16>
  %score = linalg.generic {indexing_maps = [#h3, #att, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %att : tensor<?x1x32xbf16>, tensor<1x32xbf16>) outs(%szero : tensor<?x1xbf16>) {
  ^bb0(%v: bf16, %a: bf16, %o: bf16):
    %neg = arith.mulf %v, %slope : bf16
    %pos = arith.cmpf ogt, %v, %zero : bf16
    %lr = arith.select %pos, %v, %neg : bf16
    %m = arith.mulf %lr, %a : bf16
    %s = arith.addf %o, %m : bf16
    linalg.yield %s : bf16
  } -> tensor<?x1xbf16>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x1xbf16>
  %agg = gnn.spmm sum %g, %xr weights(%alpha : tensor<?x1xbf16>) : tensor<?x1x32xbf16> -> tensor<?x1x32xbf16>
  return %agg : tensor<?x1x32xbf16>
}
