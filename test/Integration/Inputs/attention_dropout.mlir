// Attention dropout (PyG's GAT, GATv2 and TransformerConv): the softmax
// weights are multiplied by an edge mask `drop` [E, H] before the
// aggregation. The fused attention kernel keeps the online softmax on the
// weights without the mask and accumulates exp(s - m) * mask * v, so
// out_i = sum_j (alpha_ji * drop_ji) v_j and the log-sum-exp is that of the
// softmax alone. gnn-run fills the masks with arbitrary values, which checks
// the same linearity as 0 and 1/(1-p) do.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>

// GAT: per-node halves of the score, leaky relu on the edge, dropout.
func.func @gat_dropout(%g: !gnn.graph, %h: tensor<?x4x16xf32>, %att_src: tensor<4x16xf32>,
                       %att_dst: tensor<4x16xf32>,
                       %drop: tensor<?x4xf32> {gnn.domain = "edge"}) -> tensor<?x4x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %n = tensor.dim %h, %c0 : tensor<?x4x16xf32>
  %nempty = tensor.empty(%n) : tensor<?x4xf32>
  %nzero = linalg.fill ins(%zero : f32) outs(%nempty : tensor<?x4xf32>) -> tensor<?x4xf32>
  %a_src = linalg.generic {indexing_maps = [#h3, #att, #red],
                           iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %att_src : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%nzero : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %a_dst = linalg.generic {indexing_maps = [#h3, #att, #red],
                           iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %att_dst : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%nzero : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %e = gnn.sddmm add %g, %a_src, %a_dst : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x4xf32>
  %eempty = tensor.empty(%ne) : tensor<?x4xf32>
  %score = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<?x4xf32>) outs(%eempty : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg = arith.mulf %v, %slope : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %pos, %v, %neg : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x4xf32>
  %dropped = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%alpha, %drop : tensor<?x4xf32>, tensor<?x4xf32>) outs(%eempty : tensor<?x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.mulf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %out = gnn.spmm sum %g, %h weights(%dropped : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %out : tensor<?x4x16xf32>
}

// Graph Transformer: q_i . k_j / sqrt(C), the softmax's log-sum-exp returned
// too, and dropout as two scaling ops: a 0/1-style mask per (edge, head)
// times a per-edge factor broadcast over the heads, then the division by a
// constant (1 - p).
func.func @transformer_dropout(%g: !gnn.graph, %q: tensor<?x2x8xf32>, %k: tensor<?x2x8xf32>,
                               %v: tensor<?x2x8xf32>,
                               %drop: tensor<?x2xf32> {gnn.domain = "edge"},
                               %scale: tensor<?xf32> {gnn.domain = "edge"})
    -> (tensor<?x2x8xf32>, tensor<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %root = arith.constant 2.8284271247461903 : f32
  %keep = arith.constant 0.9 : f32
  %dot = gnn.sddmm dot %g, %k, %q : tensor<?x2x8xf32>, tensor<?x2x8xf32> -> tensor<?x2xf32>
  %ne = tensor.dim %dot, %c0 : tensor<?x2xf32>
  %eempty = tensor.empty(%ne) : tensor<?x2xf32>
  %score = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dot : tensor<?x2xf32>) outs(%eempty : tensor<?x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.divf %x, %root : f32
    linalg.yield %s : f32
  } -> tensor<?x2xf32>
  %alpha, %lse = gnn.edge_softmax %g, %score : tensor<?x2xf32>, tensor<?x2xf32>
  %masked = linalg.generic {indexing_maps = [#id2, #id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%drop, %alpha, %scale : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?xf32>)
      outs(%eempty : tensor<?x2xf32>) {
  ^bb0(%m: f32, %a: f32, %s: f32, %o: f32):
    %ms = arith.mulf %m, %s : f32
    %r = arith.mulf %ms, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %dropped = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%masked : tensor<?x2xf32>) outs(%eempty : tensor<?x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.divf %a, %keep : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %out = gnn.spmm sum %g, %v weights(%dropped : tensor<?x2xf32>) : tensor<?x2x8xf32> -> tensor<?x2x8xf32>
  return %out, %lse : tensor<?x2x8xf32>, tensor<?x2xf32>
}
