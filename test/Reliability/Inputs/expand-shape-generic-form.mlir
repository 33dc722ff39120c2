func.func @f(%x: tensor<?x64xf32>, %n: index) -> tensor<?x4x16xf32> {
  %h = "tensor.expand_shape"(%x, %n) <{reassociation = [[0], [ ]], static_output_shape = array<i64: -9223372036854775808, 4, 16>}> : (tensor<?x64xf32>, index) -> tensor<?x4x16xf32>
  return %h : tensor<?x4x16xf32>
}
