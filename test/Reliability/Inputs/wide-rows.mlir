func.func @f(%g: !gnn.graph, %x: tensor<?x68719476736xf32>) -> tensor<?x68719476736xf32> {
  %r = gnn.spmm sum %g, %x : tensor<?x68719476736xf32> -> tensor<?x68719476736xf32>
  return %r : tensor<?x68719476736xf32>
}
