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

// -----

// expected-error @+1 {{expects a function with a single block}}
func.func @two_blocks(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
^dead:
  return %x : tensor<?x8xf32>
}

// -----

func.func @unknown_rows(%g: !gnn.graph) -> tensor<?x8xf32> {
  %n = arith.constant 4 : index
  // expected-error @+1 {{'tensor.empty' op produces a tensor whose leading dimension cannot be told to count nodes or edges}}
  %e = tensor.empty(%n) : tensor<?x8xf32>
  return %e : tensor<?x8xf32>
}

// -----

func.func @integer_fill(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xi32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xi32>
  // expected-error @+1 {{'linalg.fill' op expects a float constant to fill with but got a value of type 'i32'}}
  %f = linalg.fill ins(%one : i32) outs(%e : tensor<?x8xi32>) -> tensor<?x8xi32>
  return %f : tensor<?x8xi32>
}

// -----

func.func @dense_constant(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-error @+1 {{'linalg.matmul' op reads a value the CUDA backend has no buffer for}}
  %h = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %h : tensor<?x8xf32>
}

// -----

func.func @transposed_matmul(%g: !gnn.graph, %x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  // Both operands transposed: not one of the GEMMs gnn-autodiff makes.
  // expected-error @+1 {{'linalg.matmul' op has indexing maps the CUDA backend does not support (C += A B, A Bᵀ or Aᵀ B)}}
  %h = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %h : tensor<8x8xf32>
}

// -----

// A kernel that adds into its result from zero cannot update an operand in
// place: the fill before it would erase the operand.
gnnk.kernel @k(%x: memref<?xf32> {gnnk.operand = 0 : i64}, %out: memref<?xf32> {gnnk.result = 0 : i64, gnnk.accumulate})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}
func.func @accumulate_tied(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gnnk.launch' op updates result #0 in place, but its kernel adds into it from zero (gnnk.accumulate)}}
  %r = gnnk.launch @k[%g](%x) rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0)>] {tied = array<i64: 0>} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
