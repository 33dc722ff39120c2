// GCN layer (Kipf & Welling), as PyG's GCNConv with its defaults (self-loops
// added, symmetric normalisation, bias):
//   out_i = d_i^-1/2 * ( sum_{j -> i} d_j^-1/2 h_j + d_i^-1/2 h_i ) + b,
//   h = x W,  d_i = in-degree(i) + 1.
// The self-loop is folded into the formula instead of being added to the
// graph, so the graph stays as loaded.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @gcn(%g: !gnn.graph, %x: tensor<?x64xf32>, %w: tensor<64x64xf32>,
               %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>

  // h = x W
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>)
                     outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>

  // dinv = (in-degree + 1)^-1/2
  %deg = gnn.degree %g : tensor<?xf32>
  %dempty = tensor.empty(%n) : tensor<?xf32>
  %dinv = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%deg : tensor<?xf32>) outs(%dempty : tensor<?xf32>) {
  ^bb0(%d: f32, %o: f32):
    %s = arith.addf %d, %one : f32
    %r = math.rsqrt %s : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>

  // hs = dinv * h, aggregated over incoming edges
  %hs = linalg.generic {indexing_maps = [#id2, #row, #id2],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h, %dinv : tensor<?x64xf32>, tensor<?xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x64xf32>
  %agg = gnn.spmm sum %g, %hs : tensor<?x64xf32> -> tensor<?x64xf32>

  // out = dinv * (agg + hs) + b
  %out = linalg.generic {indexing_maps = [#id2, #id2, #row, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%agg, %hs, %dinv, %b : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<64xf32>)
      outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %d: f32, %bias: f32, %o: f32):
    %t = arith.addf %a, %s : f32
    %u = arith.mulf %t, %d : f32
    %v = arith.addf %u, %bias : f32
    linalg.yield %v : f32
  } -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}
