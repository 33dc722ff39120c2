// RUN: gnn-opt %s --gnn-cuda-pipeline | FileCheck %s

// A body that yields a constant: CSE hoists the constant out of the
// linalg body before the groups are lowered, and the kernel (isolated from
// the function) gets its own copy to store.

// CHECK-LABEL: gnnk.kernel @elementwise_0
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: gnnk.store %[[ONE]] to
// CHECK: gnnk.return

#m = affine_map<(d0, d1) -> (d0, d1)>
func.func @ones(%g: !gnn.graph, %x: tensor<?x1xf32>) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1xf32>
  %0 = tensor.empty(%n) : tensor<?x1xf32>
  %r = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x1xf32>) outs(%0 : tensor<?x1xf32>) {
  ^bb0(%b: f32, %o: f32):
    %v = arith.constant 1.0 : f32
    linalg.yield %v : f32
  } -> tensor<?x1xf32>
  return %r : tensor<?x1xf32>
}
