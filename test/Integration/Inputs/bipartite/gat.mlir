// A bipartite GAT layer, as PyG's GATConv((64, 64), 16, heads=4,
// add_self_loops=False) on (x_src, x_dst): scores of the sources' and the
// destinations' own projections, softmax over each destination's edges,
// the weighted sum of the sources' rows.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d1)>
func.func @gat(%g: !gnn.graph<bipartite>, %x: tensor<?x64xf32> {gnn.domain = "src"},
               %xd: tensor<?x64xf32> {gnn.domain = "dst"}, %w: tensor<64x64xf32>,
               %att_src: tensor<4x16xf32>, %att_dst: tensor<4x16xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  %ns = tensor.dim %x, %c0 : tensor<?x64xf32>
  %nd = tensor.dim %xd, %c0 : tensor<?x64xf32>
  %es = tensor.empty(%ns) : tensor<?x64xf32>
  %as = linalg.fill ins(%cst : f32) outs(%es : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hs2 = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%as : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hs = tensor.expand_shape %hs2 [[0], [1, 2]] output_shape [%ns, 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>
  %ed = tensor.empty(%nd) : tensor<?x64xf32>
  %ad = linalg.fill ins(%cst : f32) outs(%ed : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hd2 = linalg.matmul ins(%xd, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%ad : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hd = tensor.expand_shape %hd2 [[0], [1, 2]] output_shape [%nd, 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>
  %1 = tensor.empty(%ns) : tensor<?x4xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %a_src = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%hs, %att_src : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%2 : tensor<?x4xf32>) {
  ^bb0(%h_2: f32, %a_3: f32, %out: f32):
    %7 = arith.mulf %h_2, %a_3 : f32
    %8 = arith.addf %out, %7 : f32
    linalg.yield %8 : f32
  } -> tensor<?x4xf32>
  %3 = tensor.empty(%nd) : tensor<?x4xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %a_dst = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%hd, %att_dst : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%4 : tensor<?x4xf32>) {
  ^bb0(%h_2: f32, %a_3: f32, %out: f32):
    %7 = arith.mulf %h_2, %a_3 : f32
    %8 = arith.addf %out, %7 : f32
    linalg.yield %8 : f32
  } -> tensor<?x4xf32>
  %e = gnn.sddmm add %g, %a_src, %a_dst : !gnn.graph<bipartite>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x4xf32>
  %5 = tensor.empty(%ne) : tensor<?x4xf32>
  %slope = arith.constant 2.000000e-01 : f32
  %score = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<?x4xf32>) outs(%5 : tensor<?x4xf32>) {
  ^bb0(%e_2: f32, %out: f32):
    %7 = arith.mulf %e_2, %slope : f32
    %8 = arith.cmpf ogt, %e_2, %cst : f32
    %9 = arith.select %8, %e_2, %7 : f32
    linalg.yield %9 : f32
  } -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %score : !gnn.graph<bipartite>, tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %hs weights(%alpha : tensor<?x4xf32>) : !gnn.graph<bipartite>, tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %flat = tensor.collapse_shape %agg [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
  %6 = tensor.empty(%nd) : tensor<?x64xf32>
  %outb = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel"]} ins(%flat, %b : tensor<?x64xf32>, tensor<64xf32>) outs(%6 : tensor<?x64xf32>) {
  ^bb0(%f_2: f32, %b_3: f32, %out: f32):
    %7 = arith.addf %f_2, %b_3 : f32
    linalg.yield %7 : f32
  } -> tensor<?x64xf32>
  return %outb : tensor<?x64xf32>
}
