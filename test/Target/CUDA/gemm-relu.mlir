// RUN: gnn-translate --gnn-to-program %s | FileCheck %s

// An MLP's ReLU after a Linear with a bias (GIN's and GINE's `nn`): torch.relu
// of the GEMM's result, its only reader, runs in the GEMM's epilogue
// (`"relu": true`, cuBLASLt's RELU_BIAS): no elementwise kernel, and the
// pre-activation is never written. The second Linear reads the ReLU's
// result from the first GEMM's buffer.
#row = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: "name": "mlp"
// CHECK-NOT: "op": "launch"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg1"
// CHECK-NEXT: "b": "arg2"
// CHECK-NEXT: "c": "[[Y:t[0-9]+]]"
// CHECK: "bias": "arg3"
// CHECK-NEXT: "relu": true
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "[[Y]]"
// CHECK-NEXT: "b": "arg4"
// CHECK-NEXT: "c": "result0"
// CHECK: "bias": "arg5"
// CHECK-NOT: "relu"
// CHECK-NOT: "op": "launch"
func.func @mlp(%g: !gnn.graph, %x: tensor<?x16xf32>, %w0: tensor<8x16xf32>, %b0: tensor<8xf32>,
               %w1: tensor<4x8xf32>, %b1: tensor<4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %bb0 = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b0 : tensor<8xf32>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %h0 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w0 : tensor<?x16xf32>, tensor<8x16xf32>)
      outs(%bb0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %le = arith.cmpf ole, %v, %zero : f32
    %r = arith.select %le, %zero, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x4xf32>
  %bb1 = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b1 : tensor<4xf32>) outs(%e2 : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x4xf32>
  %h1 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%y0, %w1 : tensor<?x8xf32>, tensor<4x8xf32>)
      outs(%bb1 : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %h1 : tensor<?x4xf32>
}

// Left to a kernel: the pre-activation is returned too (a second reader), a
// GEMM without a bias (its zero start: no RELU_BIAS form), and `x < 0` (not
// torch.relu's mask).
// CHECK-LABEL: "name": "pre_activation_returned"
// CHECK: "op": "gemm"
// CHECK-NOT: "relu"
// CHECK: "kernel": "pre_activation_returned_elementwise_0"
func.func @pre_activation_returned(%g: !gnn.graph, %x: tensor<?x16xf32>, %w0: tensor<8x16xf32>, %b0: tensor<8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %bb0 = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b0 : tensor<8xf32>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %h0 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w0 : tensor<?x16xf32>, tensor<8x16xf32>)
      outs(%bb0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %le = arith.cmpf ole, %v, %zero : f32
    %r = arith.select %le, %zero, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %y0, %h0 : tensor<?x8xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: "name": "no_bias"
// CHECK: "op": "gemm"
// CHECK-NOT: "relu"
// CHECK: "op": "launch"
func.func @no_bias(%g: !gnn.graph, %x: tensor<?x16xf32>, %w0: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h0 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w0 : tensor<?x16xf32>, tensor<8x16xf32>)
      outs(%z0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %le = arith.cmpf ole, %v, %zero : f32
    %r = arith.select %le, %zero, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %y0 : tensor<?x8xf32>
}

// CHECK-LABEL: "name": "below_zero"
// CHECK: "op": "gemm"
// CHECK-NOT: "relu"
// CHECK: "op": "launch"
func.func @below_zero(%g: !gnn.graph, %x: tensor<?x16xf32>, %w0: tensor<8x16xf32>, %b0: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %bb0 = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b0 : tensor<8xf32>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %h0 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w0 : tensor<?x16xf32>, tensor<8x16xf32>)
      outs(%bb0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %lt = arith.cmpf olt, %v, %zero : f32
    %r = arith.select %lt, %zero, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %y0 : tensor<?x8xf32>
}
