// RUN: gnn-translate --gnn-to-program %s | FileCheck %s

// The Program of a small layer: inputs named after argument numbers, the
// matmul as a cuBLAS GEMM (its zero fill folded into beta), the spmm group as
// a launch over the graph's rows, the result written in place.

// CHECK: "format": "gnnc-program"
// CHECK: "name": "layer"
// CHECK: "index_bits": 32
// CHECK: "name": "arg1"
// CHECK-NEXT: "role": "input"
// CHECK: "size": "nodes * 16"
// CHECK: "name": "arg2"
// CHECK: "size": "16 * 8"
// CHECK: "name": "result0"
// CHECK-NEXT: "role": "output"
// CHECK-NEXT: "dtype": "f32"
// CHECK-NEXT: "size": "nodes * 8"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg1"
// CHECK-NEXT: "b": "arg2"
// CHECK: "m": "nodes",
// CHECK-NEXT: "n": "8",
// CHECK-NEXT: "k": "16",
// CHECK: "beta": 0.0
// CHECK: "op": "launch",
// CHECK-NEXT: "kernel": "spmm_0",
// CHECK: "ceil_div((nodes * {{16|32}}), 64)"
// CHECK: "graph": "csr_row_ptr"
// CHECK: "buffer": "result0"
func.func @layer(%g: !gnn.graph, %x: tensor<?x16xf32>, %w: tensor<16x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %o = gnn.spmm sum %g, %h : tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// Edge tensors at the boundary are converted to and from CSR slot order.
// CHECK-LABEL: "name": "edges"
// CHECK: "kernel": "gnn_edges_to_slots"
// CHECK: "graph": "csr_edge"
// CHECK: "kernel": "edge_softmax_0"
// CHECK: "kernel": "gnn_slots_to_edges"
func.func @edges(%g: !gnn.graph, %s: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2xf32> {
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>
  return %a : tensor<?x2xf32>
}

// gnn-autodiff's matmul gradients: dX = dY Wᵀ (B transposed, a sum over the
// weight's columns: cuBLAS) and dW = Xᵀ dY (A transposed, a sum over every
// node: the row split, in double precision into an f64 temp of 256 * 16 *
// 8 elements at most).
// CHECK-LABEL: "name": "weight_grads"
// CHECK: "name": "[[P:t[0-9]+]]"
// CHECK-NEXT: "role": "temp"
// CHECK-NEXT: "dtype": "f64"
// CHECK-NEXT: "size": "max(max(min(ceil_div(nodes, 128), 128), min(ceil_div(nodes, 512), 256)), 1) * 128"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg2"
// CHECK-NEXT: "b": "arg3"
// CHECK-NEXT: "c": "result0"
// CHECK-NEXT: "m": "nodes",
// CHECK-NEXT: "n": "16",
// CHECK-NEXT: "k": "8",
// CHECK-NEXT: "trans_a": false,
// CHECK-NEXT: "trans_b": true,
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg1"
// CHECK-NEXT: "b": "arg2"
// CHECK-NEXT: "c": "result1"
// CHECK-NEXT: "m": "16",
// CHECK-NEXT: "n": "8",
// CHECK-NEXT: "k": "nodes",
// CHECK-NEXT: "trans_a": true,
// CHECK-NEXT: "trans_b": false,
// CHECK-NEXT: "alpha": 1.0,
// CHECK-NEXT: "beta": 0.0,
// CHECK-NEXT: "partials": "[[P]]",
// CHECK-NEXT: "chunks": "max(max(min(ceil_div(nodes, 128), 128), min(ceil_div(nodes, 512), 256)), 1)",
// CHECK-NEXT: "overlaps": 1
func.func @weight_grads(%g: !gnn.graph, %x: tensor<?x16xf32>, %dy: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> (tensor<?x16xf32>, tensor<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%dy, %w : tensor<?x8xf32>, tensor<16x8xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  %ew = tensor.empty() : tensor<16x8xf32>
  %fw = linalg.fill ins(%z : f32) outs(%ew : tensor<16x8xf32>) -> tensor<16x8xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %dy : tensor<?x16xf32>, tensor<?x8xf32>) outs(%fw : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %dx, %dw : tensor<?x16xf32>, tensor<16x8xf32>
}

// A bias gradient beside its weight's (gnn-autodiff's db = Σ_rows dY next to
// dW = dYᵀ X): the row split sums dY's columns in the same kernels (its
// "row_sums", the partials 8 wider a slice), no kernel of its own. Where the
// sum is read before the GEMM (%early) it stays a kernel; f64 GEMMs
// (cuBLAS) take none.
// CHECK-LABEL: "name": "bias_grads"
// CHECK: "name": "[[P:t[0-9]+]]"
// CHECK-NEXT: "role": "temp"
// CHECK-NEXT: "dtype": "f64"
// CHECK-NEXT: "size": "max(max(min(ceil_div(nodes, 128), 128), min(ceil_div(nodes, 512), 256)), 1) * 136"
// CHECK: "op": "gemm"
// CHECK-NEXT: "a": "arg2"
// CHECK-NEXT: "b": "arg1"
// CHECK-NEXT: "c": "result0"
// CHECK-NEXT: "m": "8",
// CHECK-NEXT: "n": "16",
// CHECK-NEXT: "k": "nodes",
// CHECK-NEXT: "trans_a": true,
// CHECK-NEXT: "trans_b": false,
// CHECK-NEXT: "alpha": 1.0,
// CHECK-NEXT: "beta": 0.0,
// CHECK-NEXT: "partials": "[[P]]",
// CHECK-NEXT: "chunks": "max(max(min(ceil_div(nodes, 128), 128), min(ceil_div(nodes, 512), 256)), 1)",
// CHECK-NEXT: "row_sums": "result1"
// CHECK-NEXT: }
// CHECK-NEXT: ],
func.func @bias_grads(%g: !gnn.graph, %x: tensor<?x16xf32>, %dy: tensor<?x8xf32>) -> (tensor<8x16xf32>, tensor<8xf32>) {
  %z = arith.constant 0.0 : f32
  %ew = tensor.empty() : tensor<8x16xf32>
  %fw = linalg.fill ins(%z : f32) outs(%ew : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%dy, %x : tensor<?x8xf32>, tensor<?x16xf32>) outs(%fw : tensor<8x16xf32>) -> tensor<8x16xf32>
  %eb = tensor.empty() : tensor<8xf32>
  %fb = linalg.fill ins(%z : f32) outs(%eb : tensor<8xf32>) -> tensor<8xf32>
  %db = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy : tensor<?x8xf32>) outs(%fb : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %dw, %db : tensor<8x16xf32>, tensor<8xf32>
}

// CHECK-LABEL: "name": "bias_grad_read_first"
// CHECK: "kernel": "bias_grad_read_first_elementwise_0"
// CHECK: "op": "gemm"
// CHECK: "chunks": "max(max(min(ceil_div(nodes, 128), 128), min(ceil_div(nodes, 512), 256)), 1)",
// CHECK-NEXT: "overlaps": 3
// CHECK-NEXT: }
func.func @bias_grad_read_first(%g: !gnn.graph, %x: tensor<?x16xf32>, %dy: tensor<?x8xf32>) -> (tensor<8x16xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<8xf32>
  %fb = linalg.fill ins(%z : f32) outs(%eb : tensor<8xf32>) -> tensor<8xf32>
  %db = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy : tensor<?x8xf32>) outs(%fb : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %n = tensor.dim %dy, %c0 : tensor<?x8xf32>
  %eh = tensor.empty(%n) : tensor<?x8xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %db : tensor<?x8xf32>, tensor<8xf32>) outs(%eh : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %ew = tensor.empty() : tensor<8x16xf32>
  %fw = linalg.fill ins(%z : f32) outs(%ew : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%dy, %x : tensor<?x8xf32>, tensor<?x16xf32>) outs(%fw : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %dw, %h : tensor<8x16xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: "name": "bias_grads_f64"
// CHECK: "op": "gemm"
// CHECK: "trans_a": true,
// CHECK: "beta": 0.0
// CHECK-NEXT: }
// CHECK: "kernel": "bias_grads_f64_elementwise_0"
func.func @bias_grads_f64(%g: !gnn.graph, %x: tensor<?x16xf64>, %dy: tensor<?x8xf64>) -> (tensor<8x16xf64>, tensor<8xf64>) {
  %z = arith.constant 0.0 : f64
  %ew = tensor.empty() : tensor<8x16xf64>
  %fw = linalg.fill ins(%z : f64) outs(%ew : tensor<8x16xf64>) -> tensor<8x16xf64>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%dy, %x : tensor<?x8xf64>, tensor<?x16xf64>) outs(%fw : tensor<8x16xf64>) -> tensor<8x16xf64>
  %eb = tensor.empty() : tensor<8xf64>
  %fb = linalg.fill ins(%z : f64) outs(%eb : tensor<8xf64>) -> tensor<8xf64>
  %db = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy : tensor<?x8xf64>) outs(%fb : tensor<8xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  return %dw, %db : tensor<8x16xf64>, tensor<8xf64>
}
