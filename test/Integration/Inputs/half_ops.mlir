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
// The fused attentions of the scoreboard (gnnc_ops/gt.mlir, gatv2.mlir): a
// whole attention is one function whose backward's row sums and the
// attention vector's per-node sums cross kernels and cancel, so they are
// f32 (docs/Semantics.md); its gradients are held to the per-op tolerance.
func.func @attention_dot(%g: !gnn.graph, %q: tensor<?x4x32xf32> {gnn.differentiable}, %k: tensor<?x4x32xf32> {gnn.differentiable}, %v: tensor<?x4x32xf32> {gnn.differentiable}) -> tensor<?x4x32xf32> {
  %s = gnn.sddmm dot %g, %q, %k : tensor<?x4x32xf32>, tensor<?x4x32xf32> -> tensor<?x4xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %r = gnn.spmm sum %g, %v weights(%a : tensor<?x4xf32>) : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  return %r : tensor<?x4x32xf32>
}
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @attention_leaky(%g: !gnn.graph, %xl: tensor<?x4x32xf32> {gnn.differentiable}, %xr: tensor<?x4x32xf32> {gnn.differentiable}, %att: tensor<4x32xf32> {gnn.differentiable}) -> tensor<?x4x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %e = gnn.sddmm add %g, %xr, %xl : tensor<?x4x32xf32>, tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x4x32xf32>
  %sempty = tensor.empty(%ne) : tensor<?x4xf32>
  %szero = linalg.fill ins(%zero : f32) outs(%sempty : tensor<?x4xf32>) -> tensor<?x4xf32>
  %score = linalg.generic {indexing_maps = [#h3, #att, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %att : tensor<?x4x32xf32>, tensor<4x32xf32>) outs(%szero : tensor<?x4xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %neg = arith.mulf %x, %slope : f32
    %pos = arith.cmpf ogt, %x, %zero : f32
    %lr = arith.select %pos, %x, %neg : f32
    %m = arith.mulf %lr, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x4xf32>
  %r = gnn.spmm sum %g, %xr weights(%alpha : tensor<?x4xf32>) : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  return %r : tensor<?x4x32xf32>
}
