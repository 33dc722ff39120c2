// alpha = softmax_v(att . leaky(xl[v] + xr[u])); out[v] = sum_u alpha xr[u]  (H = 2, D = 32)
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gatv2(%g: !gnn.graph, %xl: tensor<?x2x32xf32>, %xr: tensor<?x2x32xf32>, %att: tensor<2x32xf32>) -> tensor<?x2x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %e = gnn.sddmm add %g, %xr, %xl : tensor<?x2x32xf32>, tensor<?x2x32xf32> -> tensor<?x2x32xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x2x32xf32>
  %sempty = tensor.empty(%ne) : tensor<?x2xf32>
  %szero = linalg.fill ins(%zero : f32) outs(%sempty : tensor<?x2xf32>) -> tensor<?x2xf32>
  %score = linalg.generic {indexing_maps = [#h3, #att, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %att : tensor<?x2x32xf32>, tensor<2x32xf32>) outs(%szero : tensor<?x2xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %neg = arith.mulf %v, %slope : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %lr = arith.select %pos, %v, %neg : f32
    %m = arith.mulf %lr, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x2xf32>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x2xf32>
  %agg = gnn.spmm sum %g, %xr weights(%alpha : tensor<?x2xf32>) : tensor<?x2x32xf32> -> tensor<?x2x32xf32>
  return %agg : tensor<?x2x32xf32>
}
