// Graph Transformer layer (Shi et al.), 4 heads x 16 features, as PyG's
// TransformerConv(64, 16, heads=4) (concat, root weight, no beta):
//   q = x W_q + b_q, k = x W_k + b_k, v = x W_v + b_v  (nodes x heads x 16)
//   alpha_ji = softmax_j(q_i . k_j / sqrt(16))         per head
//   out_i = concat_heads(sum_j alpha_ji v_j) + x_i W_s + b_s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @transformer(%g: !gnn.graph, %x: tensor<?x64xf32>,
                       %wq: tensor<64x64xf32>, %bq: tensor<64xf32>,
                       %wk: tensor<64x64xf32>, %bk: tensor<64xf32>,
                       %wv: tensor<64x64xf32>, %bv: tensor<64xf32>,
                       %ws: tensor<64x64xf32>, %bs: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.25 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>

  %q0 = linalg.matmul ins(%x, %wq : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %k0 = linalg.matmul ins(%x, %wk : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %v0 = linalg.matmul ins(%x, %wv : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %s0 = linalg.matmul ins(%x, %ws : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  // Bias of q, k, v (the query also takes the 1/sqrt(16) scale).
  %q2, %k2, %v2 = linalg.generic {indexing_maps = [#id2, #id2, #id2, #col, #col, #col, #id2, #id2, #id2],
                                   iterator_types = ["parallel", "parallel"]}
      ins(%q0, %k0, %v0, %bq, %bk, %bv : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>,
                                         tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      outs(%empty, %empty, %empty : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  ^bb0(%q: f32, %k: f32, %v: f32, %cq: f32, %ck: f32, %cv: f32, %o1: f32, %o2: f32, %o3: f32):
    %qb = arith.addf %q, %cq : f32
    %qs = arith.mulf %qb, %scale : f32
    %kb = arith.addf %k, %ck : f32
    %vb = arith.addf %v, %cv : f32
    linalg.yield %qs, %kb, %vb : f32, f32, f32
  } -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>)
  %q = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [%n, 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>
  %k = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [%n, 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>
  %v = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [%n, 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>

  // score_ji = k_j . q_i (source j, destination i), per head.
  %score = gnn.sddmm dot %g, %k, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>)
      : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %flat = tensor.collapse_shape %agg [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#id2, #id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%flat, %s0, %bs : tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %bias: f32, %o: f32):
    %t = arith.addf %a, %s : f32
    %u = arith.addf %t, %bias : f32
    linalg.yield %u : f32
  } -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}
