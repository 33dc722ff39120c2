// bf16 rows scaled by an f32 parameter through explicit casts, then
// attention: a function that mixes storage types. Read by
// python/tests/test_half.py and unittests/Runtime/TrainingProgramTest.cpp.
#id = affine_map<(d0, d1) -> (d0, d1)>
#head = affine_map<(d0, d1) -> (d1)>
func.func @f(%g: !gnn.graph, %x: tensor<?x2x4xbf16>, %att: tensor<2xf32>) -> tensor<?x2x4xbf16> {
  %s = gnn.sddmm dot %g, %x, %x : tensor<?x2x4xbf16>, tensor<?x2x4xbf16> -> tensor<?x2xbf16>
  %c0 = arith.constant 0 : index
  %e = tensor.dim %s, %c0 : tensor<?x2xbf16>
  %init = tensor.empty(%e) : tensor<?x2xbf16>
  %scaled = linalg.generic {indexing_maps = [#id, #head, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %att : tensor<?x2xbf16>, tensor<2xf32>) outs(%init : tensor<?x2xbf16>) {
  ^bb0(%a: bf16, %b: f32, %o: bf16):
    %w = arith.extf %a : bf16 to f32
    %p = arith.mulf %w, %b : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x2xbf16>
  %alpha = gnn.edge_softmax %g, %scaled : tensor<?x2xbf16>
  %r = gnn.spmm sum %g, %x weights(%alpha : tensor<?x2xbf16>) : tensor<?x2x4xbf16> -> tensor<?x2x4xbf16>
  return %r : tensor<?x2x4xbf16>
}
