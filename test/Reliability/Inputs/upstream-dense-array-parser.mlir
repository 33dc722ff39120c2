func.func @transpose(%x: tensor<4x3xf32>, %e: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, x]
  return %t : tensor<3x4xf32>
}
func.func @broadcast(%x: tensor<4xf32>, %e: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %t = linalg.broadcast ins(%x : tensor<4xf32>) outs(%e : tensor<3x4xf32>) dimensions = 0
  return %t : tensor<3x4xf32>
}
func.func @reduce(%x: tensor<3x4xf32>, %e: tensor<3xf32>) -> tensor<3xf32> {
  %t = linalg.reduce ins(%x : tensor<3x4xf32>) outs(%e : tensor<3xf32>) dimensions = [1,]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %t : tensor<3xf32>
}
// Well-formed lists pass the check (and fail later for other reasons).
func.func @fine(%x: tensor<4x3xf32>, %e: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [ 1 , 0x0 ]
  return %t : tensor<3x4xf32>
}
