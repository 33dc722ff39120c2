// Two Linears with biases around a sum aggregation:
// out = spmm_sum(relu(x W1ᵀ + b1)) W2ᵀ + b2. Its training step's weight
// gradients run the GEMM's row split, each with its bias gradient as the
// split's row sums (no kernel of their own): dW1 = dHᵀ x (64 x 32: the
// tile kernel), dW2 = dOutᵀ agg (8 x 64: the narrow kernel, A the narrow
// side). gnn-run --grad checks every gradient against the reference.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @linear_bias(%g: !gnn.graph, %x: tensor<?x32xf32>, %w1: tensor<64x32xf32>,
                       %b1: tensor<64xf32>, %w2: tensor<8x64xf32>,
                       %b2: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x32xf32>
  %e1 = tensor.empty(%n) : tensor<?x64xf32>
  %i1 = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b1 : tensor<64xf32>) outs(%e1 : tensor<?x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x64xf32>
  %h = linalg.matmul indexing_maps = [#a, #bt, #c]
      ins(%x, %w1 : tensor<?x32xf32>, tensor<64x32xf32>) outs(%i1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %e2 = tensor.empty(%n) : tensor<?x64xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x64xf32>) outs(%e2 : tensor<?x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %p = arith.maximumf %v, %zero : f32
    linalg.yield %p : f32
  } -> tensor<?x64xf32>
  %agg = gnn.spmm sum %g, %r : tensor<?x64xf32> -> tensor<?x64xf32>
  %e3 = tensor.empty(%n) : tensor<?x8xf32>
  %i2 = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : tensor<8xf32>) outs(%e3 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %out = linalg.matmul indexing_maps = [#a, #bt, #c]
      ins(%agg, %w2 : tensor<?x64xf32>, tensor<8x64xf32>) outs(%i2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %out : tensor<?x8xf32>
}
