// A three-layer GCN (64 -> 64 -> 64 -> 16, ReLU between layers), each layer
// as examples/gcn.mlir: out = dinv * (spmm(dinv * x W) + dinv * x W) + b.
// The memory planner's multi-layer case: each layer's temporaries are dead
// before the next layer's are written, so the arena holds about one layer.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @gcn3(%g: !gnn.graph, %x: tensor<?x64xf32>,
                %w1: tensor<64x64xf32>, %b1: tensor<64xf32>,
                %w2: tensor<64x64xf32>, %b2: tensor<64xf32>,
                %w3: tensor<64x16xf32>, %b3: tensor<16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %deg = gnn.degree %g : tensor<?xf32>
  %dempty = tensor.empty(%n) : tensor<?xf32>
  %dinv = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%deg : tensor<?xf32>) outs(%dempty : tensor<?xf32>) {
  ^bb0(%d: f32, %o: f32):
    %s = arith.addf %d, %one : f32
    %r = math.rsqrt %s : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>

  // Layer 1: 64 -> 64.
  %empty1 = tensor.empty(%n) : tensor<?x64xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%empty1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h1 = linalg.matmul ins(%x, %w1 : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hs1 = linalg.generic {indexing_maps = [#id2, #row, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%h1, %dinv : tensor<?x64xf32>, tensor<?xf32>) outs(%empty1 : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x64xf32>
  %agg1 = gnn.spmm sum %g, %hs1 : tensor<?x64xf32> -> tensor<?x64xf32>
  %y1 = linalg.generic {indexing_maps = [#id2, #id2, #row, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%agg1, %hs1, %dinv, %b1 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<64xf32>)
      outs(%empty1 : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %d: f32, %bias: f32, %o: f32):
    %p = arith.addf %a, %s : f32
    %q = arith.mulf %p, %d : f32
    %v = arith.addf %q, %bias : f32
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>

  // Layer 2: 64 -> 64.
  %empty2 = tensor.empty(%n) : tensor<?x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%empty2 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h2 = linalg.matmul ins(%y1, %w2 : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc2 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hs2 = linalg.generic {indexing_maps = [#id2, #row, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%h2, %dinv : tensor<?x64xf32>, tensor<?xf32>) outs(%empty2 : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x64xf32>
  %agg2 = gnn.spmm sum %g, %hs2 : tensor<?x64xf32> -> tensor<?x64xf32>
  %y2 = linalg.generic {indexing_maps = [#id2, #id2, #row, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%agg2, %hs2, %dinv, %b2 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<64xf32>)
      outs(%empty2 : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %d: f32, %bias: f32, %o: f32):
    %p = arith.addf %a, %s : f32
    %q = arith.mulf %p, %d : f32
    %v = arith.addf %q, %bias : f32
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>

  // Layer 3: 64 -> 16.
  %empty3 = tensor.empty(%n) : tensor<?x16xf32>
  %acc3 = linalg.fill ins(%zero : f32) outs(%empty3 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %h3 = linalg.matmul ins(%y2, %w3 : tensor<?x64xf32>, tensor<64x16xf32>)
                      outs(%acc3 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %hs3 = linalg.generic {indexing_maps = [#id2, #row, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%h3, %dinv : tensor<?x16xf32>, tensor<?xf32>) outs(%empty3 : tensor<?x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x16xf32>
  %agg3 = gnn.spmm sum %g, %hs3 : tensor<?x16xf32> -> tensor<?x16xf32>
  %y3 = linalg.generic {indexing_maps = [#id2, #id2, #row, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%agg3, %hs3, %dinv, %b3 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<16xf32>)
      outs(%empty3 : tensor<?x16xf32>) {
  ^bb0(%a: f32, %s: f32, %d: f32, %bias: f32, %o: f32):
    %p = arith.addf %a, %s : f32
    %q = arith.mulf %p, %d : f32
    %v = arith.addf %q, %bias : f32
    linalg.yield %v : f32
  } -> tensor<?x16xf32>
  return %y3 : tensor<?x16xf32>
}
