// RUN: gnn-translate --gnn-to-program %s | FileCheck %s

// Terms summed by matmuls adding into the previous term (a SAGE layer's
// bias + x W_r + agg W_l): the bias broadcast is no kernel but the first
// GEMM's bias (cuBLASLt's epilogue, beta 0, into the output), and the
// second GEMM adds into that buffer (beta = 1) with no copy. An init read by
// another op too keeps its own buffer: copied first, then added into.
// CHECK-LABEL: "name": "chain"
// CHECK-NOT: "op": "copy"
// CHECK-NOT: "op": "launch"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg1"
// CHECK-NEXT: "b": "arg2"
// CHECK-NEXT: "c": "result0"
// CHECK: "beta": 0.0,
// CHECK-NEXT: "bias": "arg4"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg1"
// CHECK-NEXT: "b": "arg3"
// CHECK-NEXT: "c": "result0"
// CHECK: "beta": 1.0
// CHECK-NOT: "bias"
// CHECK-NOT: "op": "copy"
// CHECK-LABEL: "name": "shared_init"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg1"
// CHECK-NEXT: "b": "arg2"
// CHECK-NEXT: "c": "[[T:t[0-9]+]]"
// CHECK: "beta": 0.0
// CHECK: "op": "copy"
// CHECK-NEXT: "src": "[[T]]"
// CHECK-NEXT: "dst": "result0"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg1"
// CHECK-NEXT: "b": "arg3"
// CHECK-NEXT: "c": "result0"
// CHECK: "beta": 1.0
func.func @chain(%g: !gnn.graph, %x: tensor<?x16xf32>, %wr: tensor<16x8xf32>, %wl: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %bb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %hr = linalg.matmul ins(%x, %wr : tensor<?x16xf32>, tensor<16x8xf32>) outs(%bb : tensor<?x8xf32>) -> tensor<?x8xf32>
  %o = linalg.matmul ins(%x, %wl : tensor<?x16xf32>, tensor<16x8xf32>) outs(%hr : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

func.func @shared_init(%g: !gnn.graph, %x: tensor<?x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<16x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<?x16xf32>, tensor<16x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %o = linalg.matmul ins(%x, %w2 : tensor<?x16xf32>, tensor<16x8xf32>) outs(%h : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = gnn.spmm sum %g, %h : tensor<?x8xf32> -> tensor<?x8xf32>
  return %o, %r : tensor<?x8xf32>, tensor<?x8xf32>
}

// A broadcast that another op reads too is written by a kernel, and the
// GEMM adds into it (no bias).
// CHECK-LABEL: "name": "bias_read_twice"
// CHECK: "kernel": "{{.*}}elementwise_0"
// CHECK: "op": "gemm"
// CHECK-NOT: "bias"
// CHECK: "beta": 1.0
func.func @bias_read_twice(%g: !gnn.graph, %x: tensor<?x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %bb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x8xf32>) outs(%bb : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = gnn.spmm sum %g, %bb : tensor<?x8xf32> -> tensor<?x8xf32>
  return %h, %r : tensor<?x8xf32>, tensor<?x8xf32>
}
