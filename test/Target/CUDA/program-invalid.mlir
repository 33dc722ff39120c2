// RUN: gnn-translate --gnn-to-program %s -split-input-file -verify-diagnostics

// expected-error @+1 {{argument #1 has type 'f32', which the CUDA backend does not support}}
func.func @scalar(%g: !gnn.graph, %s: f32) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = arith.constant 4 : index
  %e = tensor.empty(%n) : tensor<?x8xf32>
  return %e : tensor<?x8xf32>
}

// -----

func.func @dynamic_rhs(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-error @+1 {{'linalg.matmul' op expects a static right-hand matrix}}
  %h = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<?x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %h : tensor<?x8xf32>
}

// -----

func.func @scalar_math(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'arith.addf' op is not supported by the CUDA backend (expected gnnk.launch, linalg.matmul, fills and reshapes after gnn-cuda-pipeline)}}
  %two = arith.addf %one, %one : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%two : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %h : tensor<?x8xf32>
}

// -----

func.func @concat(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tensor.concat' op is not supported by the CUDA backend (expected gnnk.launch, linalg.matmul, fills and reshapes after gnn-cuda-pipeline)}}
  %c = tensor.concat dim(0) %x, %x : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}
