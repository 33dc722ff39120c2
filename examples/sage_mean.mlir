// GraphSAGE with mean aggregation, as PyG's SAGEConv(aggr="mean"):
//   out_i = W_l^T mean_{j -> i} x_j + b_l + W_r^T x_i
// The mean is linear, so it runs after the projection (fewer features to move);
// a node without incoming edges aggregates 0.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @sage_mean(%g: !gnn.graph, %x: tensor<?x64xf32>, %wl: tensor<64x64xf32>,
                     %bl: tensor<64xf32>, %wr: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hl = linalg.matmul ins(%x, %wl : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hr = linalg.matmul ins(%x, %wr : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %agg = gnn.spmm mean %g, %hl : tensor<?x64xf32> -> tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#id2, #id2, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%agg, %hr, %bl : tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>)
      outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %r: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %r : f32
    linalg.yield %t : f32
  } -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}
