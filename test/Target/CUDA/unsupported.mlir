// RUN: not gnn-translate --gnn-to-cuda %s -split-input-file 2>&1 | FileCheck %s

// Unsupported IR fails with a diagnostic on the op.

// CHECK: unsupported.mlir:1 offset :8:8: error: 'linalg.generic' op uses 'tensor<?x8xf8E5M2>'; the CUDA backend supports only f16, bf16, f32 and f64 tensors
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f8(%g: !gnn.graph, %x: tensor<?x8xf8E5M2>) -> tensor<?x8xf8E5M2> {
  %o = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf8E5M2>) outs(%x : tensor<?x8xf8E5M2>) {
  ^bb0(%a: f8E5M2, %b: f8E5M2):
    %n = arith.negf %a : f8E5M2
    linalg.yield %n : f8E5M2
  } -> tensor<?x8xf8E5M2>
  return %o : tensor<?x8xf8E5M2>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK: unsupported.mlir:16 offset :10:10: error: 'math.atan' op is not supported by the CUDA printer
func.func @atan(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %o = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %a = math.atan %v : f32
    linalg.yield %a : f32
  } -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}
