// The integer-list check skips what MLIR's lexer skips between tokens:
// comments and blank lines between the keyword, `=` and the list.
func.func @transpose(%x: tensor<4x3xf32>, %e: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation // the order
    = // of the dimensions
    [1, x]
  return %t : tensor<3x4xf32>
}
func.func @broadcast(%x: tensor<4xf32>, %e: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %t = linalg.broadcast ins(%x : tensor<4xf32>) outs(%e : tensor<3x4xf32>) dimensions // added

    = [0, // first
       y]
  return %t : tensor<3x4xf32>
}
