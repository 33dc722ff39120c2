// Fused attention whose heads span a lane count that is not a power of two:
// 2 heads of 3 features (a head is 3 of the 8 feature lanes) and 4 heads of
// 5 features (heads straddle the chunks of narrower teams). The scores are
// reduced per head with masks instead of aligned shuffle groups.

func.func @dot_h2d3(%g: !gnn.graph, %q: tensor<?x2x3xf32>, %k: tensor<?x2x3xf32>) -> tensor<?x2x3xf32> {
  %e = gnn.sddmm dot %g, %k, %q : tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2xf32>
  %a = gnn.edge_softmax %g, %e : tensor<?x2xf32>
  %r = gnn.spmm sum %g, %k weights(%a : tensor<?x2xf32>) : tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %r : tensor<?x2x3xf32>
}

func.func @dot_h4d5(%g: !gnn.graph, %q: tensor<?x4x5xf32>, %k: tensor<?x4x5xf32>) -> tensor<?x4x5xf32> {
  %e = gnn.sddmm dot %g, %k, %q : tensor<?x4x5xf32>, tensor<?x4x5xf32> -> tensor<?x4xf32>
  %a = gnn.edge_softmax %g, %e : tensor<?x4xf32>
  %r = gnn.spmm sum %g, %k weights(%a : tensor<?x4xf32>) : tensor<?x4x5xf32> -> tensor<?x4x5xf32>
  return %r : tensor<?x4x5xf32>
}
