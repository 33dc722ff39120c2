// GIN layer (Xu et al.), as PyG's GINConv(nn, eps=0) with
// nn = Linear(64, 64) -> ReLU -> Linear(64, 64):
//   out_i = W_2^T relu(W_1^T ((1 + eps) x_i + sum_{j -> i} x_j) + b_1) + b_2

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @gin(%g: !gnn.graph, %x: tensor<?x64xf32>, %w1: tensor<64x64xf32>,
               %b1: tensor<64xf32>, %w2: tensor<64x64xf32>, %b2: tensor<64xf32>)
    -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %agg = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %z = linalg.generic {indexing_maps = [#id2, #id2, #id2],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %agg : tensor<?x64xf32>, tensor<?x64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %k = arith.addf %one, %eps : f32
    %t = arith.mulf %k, %a : f32
    %u = arith.addf %t, %s : f32
    linalg.yield %u : f32
  } -> tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h1 = linalg.matmul ins(%z, %w1 : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #col, #id2],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h1, %b1 : tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  %h2 = linalg.matmul ins(%r1, %w2 : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#id2, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%h2, %b2 : tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}
