func.func @f(%x: tensor<?x4x16xf32>) -> tensor<?x64xf32> {
  %h = tensor.collapse_shape %x [[0], [], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
  return %h : tensor<?x64xf32>
}
