// One gnn op per function, in f32: run-half.sh turns them into bf16 and f16
// and runs each on the GPU forward and with --grad against the reference at
// the per-op tolerance (docs/Semantics.md, "Storage and arithmetic types").
func.func @spmm_sum(%g: !gnn.graph, %x: tensor<?x64xf32> {gnn.differentiable}) -> tensor<?x64xf32> {
  %r = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
func.func @spmm_mean(%g: !gnn.graph, %x: tensor<?x12xf32> {gnn.differentiable}) -> tensor<?x12xf32> {
  %r = gnn.spmm mean %g, %x : tensor<?x12xf32> -> tensor<?x12xf32>
  return %r : tensor<?x12xf32>
}
func.func @spmm_max(%g: !gnn.graph, %x: tensor<?x64xf32> {gnn.differentiable}) -> tensor<?x64xf32> {
  %r = gnn.spmm max %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
func.func @spmm_weighted(%g: !gnn.graph, %x: tensor<?x4x16xf32> {gnn.differentiable}, %w: tensor<?x4xf32> {gnn.domain = "edge", gnn.differentiable}) -> tensor<?x4x16xf32> {
  %r = gnn.spmm sum %g, %x weights(%w : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %r : tensor<?x4x16xf32>
}
func.func @reduce_sum(%g: !gnn.graph, %v: tensor<?x8xf32> {gnn.domain = "edge", gnn.differentiable}) -> tensor<?x8xf32> {
  %r = gnn.reduce sum %g, %v : tensor<?x8xf32> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
func.func @edge_softmax(%g: !gnn.graph, %s: tensor<?x4xf32> {gnn.domain = "edge", gnn.differentiable}) -> tensor<?x4xf32> {
  %r = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
func.func @sddmm_dot(%g: !gnn.graph, %a: tensor<?x4x16xf32> {gnn.differentiable}, %b: tensor<?x4x16xf32> {gnn.differentiable}) -> tensor<?x4xf32> {
  %r = gnn.sddmm dot %g, %a, %b : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
