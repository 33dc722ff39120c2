// A bipartite GraphSAGE-mean layer, as PyG's SAGEConv((x_src, x_dst)):
//   out_i = W_l^T mean_{j -> i} x_j + b_l + W_r^T xd_i
// (the sources' rows x, the destinations' rows xd).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
func.func @sage(%g: !gnn.graph<bipartite>, %x: tensor<?x4xf32> {gnn.domain = "src", gnn.differentiable},
                %xd: tensor<?x4xf32> {gnn.domain = "dst", gnn.differentiable},
                %wl: tensor<4x3xf32> {gnn.differentiable}, %bl: tensor<3xf32> {gnn.differentiable},
                %wr: tensor<4x3xf32> {gnn.differentiable}) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  %ns = tensor.dim %x, %c0 : tensor<?x4xf32>
  %nd = tensor.dim %xd, %c0 : tensor<?x4xf32>
  %es = tensor.empty(%ns) : tensor<?x3xf32>
  %as = linalg.fill ins(%cst : f32) outs(%es : tensor<?x3xf32>) -> tensor<?x3xf32>
  %ed = tensor.empty(%nd) : tensor<?x3xf32>
  %ad = linalg.fill ins(%cst : f32) outs(%ed : tensor<?x3xf32>) -> tensor<?x3xf32>
  %hl = linalg.matmul ins(%x, %wl : tensor<?x4xf32>, tensor<4x3xf32>) outs(%as : tensor<?x3xf32>) -> tensor<?x3xf32>
  %hr = linalg.matmul ins(%xd, %wr : tensor<?x4xf32>, tensor<4x3xf32>) outs(%ad : tensor<?x3xf32>) -> tensor<?x3xf32>
  %agg = gnn.spmm mean %g, %hl : !gnn.graph<bipartite>, tensor<?x3xf32> -> tensor<?x3xf32>
  %1 = tensor.empty(%nd) : tensor<?x3xf32>
  %out = linalg.generic {indexing_maps = [#map, #map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%agg, %hr, %bl : tensor<?x3xf32>, tensor<?x3xf32>, tensor<3xf32>) outs(%1 : tensor<?x3xf32>) {
  ^bb0(%a: f32, %r: f32, %b: f32, %o: f32):
    %2 = arith.addf %a, %b : f32
    %3 = arith.addf %2, %r : f32
    linalg.yield %3 : f32
  } -> tensor<?x3xf32>
  return %out : tensor<?x3xf32>
}
