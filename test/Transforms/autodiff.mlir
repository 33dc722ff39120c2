// RUN: gnn-opt %s --gnn-autodiff -split-input-file | FileCheck %s
// RUN: gnn-opt %s --gnn-autodiff -split-input-file | gnn-opt -split-input-file --verify-diagnostics > /dev/null
// RUN: gnn-opt %s --gnn-autodiff=store-edge-values=1 -split-input-file | FileCheck %s --check-prefix=STORE

// spmm sum: the input's gradient aggregates the output gradient back over
// the reversed graph; nothing is kept from the forward.
// CHECK-LABEL: func.func @spmm_fwd(
// CHECK-SAME: -> tensor<?x8xf32>
// CHECK: return %{{.*}} : tensor<?x8xf32>
// CHECK-LABEL: func.func @spmm_bwd(%arg0: !gnn.graph, %arg1: tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[D:.*]] = gnn.spmm sum %arg0, %arg1 reversed
// CHECK-NEXT: return %[[D]]
func.func @spmm(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %y = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Weighted mean: dy / in-degree, then the reversed weighted sum for x and
// an sddmm dot for the weights; x and w are the residuals, the weights and
// their gradient are edge tensors.
// CHECK-LABEL: func.func @spmm_weighted_fwd(
// CHECK: return %{{.*}}, %arg1, %arg2 : tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2xf32>
// CHECK-LABEL: func.func @spmm_weighted_bwd(%arg0: !gnn.graph, %arg1: tensor<?x2x8xf32>, %arg2: tensor<?x2xf32> {gnn.domain = "edge"}, %arg3: tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2xf32>)
// CHECK: %[[DEG:.*]] = gnn.degree %arg0 : tensor<?xf32>
// CHECK: %[[DYN:.*]] = linalg.generic {{.*}} ins(%arg3, %[[DEG]] : tensor<?x2x8xf32>, tensor<?xf32>)
// CHECK: arith.divf
// CHECK: %[[DX:.*]] = gnn.spmm sum %arg0, %[[DYN]] weights(%arg2 : tensor<?x2xf32>) reversed
// CHECK: %[[DW:.*]] = gnn.sddmm dot %arg0, %arg1, %[[DYN]]
// CHECK: return %[[DX]], %[[DW]]
func.func @spmm_weighted(%g: !gnn.graph, %x: tensor<?x2x8xf32> {gnn.differentiable}, %w: tensor<?x2xf32> {gnn.domain = "edge", gnn.differentiable}) -> tensor<?x2x8xf32> {
  %y = gnn.spmm mean %g, %x weights(%w : tensor<?x2xf32>) : tensor<?x2x8xf32> -> tensor<?x2x8xf32>
  return %y : tensor<?x2x8xf32>
}

// -----

// Edge softmax: ds = a * (da - gather_dst(reduce_sum(a * da))). By default
// the weights are not kept: @softmax_fwd returns the log-sum-exp and the
// backward recomputes a = exp(s - lse[dst]); with store-edge-values the
// weights themselves are the residual.
// CHECK-LABEL: func.func @softmax_fwd(
// CHECK: %[[A:.*]], %[[L:.*]] = gnn.edge_softmax %arg0, %arg1 : tensor<?x2xf32>, tensor<?x2xf32>
// CHECK: return %[[A]], %arg1, %[[L]]
// CHECK-LABEL: func.func @softmax_bwd(%arg0: !gnn.graph, %arg1: tensor<?x2xf32> {gnn.domain = "edge"}, %arg2: tensor<?x2xf32>, %arg3: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2xf32>
// CHECK: %[[LE:.*]] = gnn.gather dst %arg0, %arg2
// CHECK: %[[RA:.*]] = linalg.generic {{.*}} ins(%arg1, %[[LE]]
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[AD:.*]] = linalg.generic {{.*}} ins(%[[RA]], %arg3
// CHECK: arith.mulf
// CHECK: %[[R:.*]] = gnn.reduce sum %arg0, %[[AD]] : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK: %[[G:.*]] = gnn.gather dst %arg0, %[[R]]
// CHECK: linalg.generic {{.*}} ins(%arg3, %[[G]]
// CHECK: arith.subf
// CHECK: linalg.generic {{.*}} ins(%[[RA]],
// CHECK: arith.mulf
// STORE-LABEL: func.func @softmax_fwd(
// STORE: %[[A:.*]] = gnn.edge_softmax %arg0, %arg1 : tensor<?x2xf32>
// STORE: return %[[A]], %[[A]]
// STORE-LABEL: func.func @softmax_bwd(%arg0: !gnn.graph, %arg1: tensor<?x2xf32> {gnn.domain = "edge"}, %arg2: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2xf32>
// STORE-NOT: math.exp
// STORE: gnn.reduce sum
func.func @softmax(%g: !gnn.graph, %s: tensor<?x2xf32> {gnn.domain = "edge", gnn.differentiable}) -> tensor<?x2xf32> {
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>
  return %a : tensor<?x2xf32>
}

// -----

// sddmm dot: each side's gradient is a weighted spmm of the other side.
// CHECK-LABEL: func.func @dot_bwd(%arg0: !gnn.graph, %arg1: tensor<?x2x8xf32>, %arg2: tensor<?x2x8xf32>, %arg3: tensor<?x2xf32> {gnn.domain = "edge"})
// CHECK-NEXT: %[[DQ:.*]] = gnn.spmm sum %arg0, %arg2 weights(%arg3 : tensor<?x2xf32>) reversed
// CHECK-NEXT: %[[DK:.*]] = gnn.spmm sum %arg0, %arg1 weights(%arg3 : tensor<?x2xf32>) :
// CHECK-NEXT: return %[[DQ]], %[[DK]]
func.func @dot(%g: !gnn.graph, %q: tensor<?x2x8xf32> {gnn.differentiable}, %k: tensor<?x2x8xf32> {gnn.differentiable}) -> tensor<?x2xf32> {
  %s = gnn.sddmm dot %g, %q, %k : tensor<?x2x8xf32>, tensor<?x2x8xf32> -> tensor<?x2xf32>
  return %s : tensor<?x2xf32>
}

// -----

// max: the edges attaining each maximum share its gradient equally. The
// forward keeps, per element, the neighbour whose edges attain it (the
// spmm's `winner` codes, a residual), so the backward is
// gnn.extremum_grad: dy to that neighbour, no edge value and no pass over
// the edges unless a tie asks for one.
// CHECK-LABEL: func.func @max_fwd(
// CHECK: %[[Y:.*]], %[[W:.*]] = gnn.spmm max %arg0, %arg1 : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
// CHECK: return %[[Y]], %arg1, %[[Y]], %[[W]]
// CHECK-LABEL: func.func @max_bwd(%arg0: !gnn.graph, %arg1: tensor<?x8xf32>, %arg2: tensor<?x8xf32>, %arg3: tensor<?x8xf32>, %arg4: tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[DX:.*]] = gnn.extremum_grad %arg0, %arg1, %arg2, %arg3, %arg4 : tensor<?x8xf32>
// CHECK-NEXT: return %[[DX]]
func.func @max(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %y = gnn.spmm max %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// bf16 (f16) rows: gnn-pull-extremum-grads will pull the gradient along the
// edges, which needs only how many edges attain each maximum, so the
// forward's codes are `counted` (a single edge is -2, not its source's id).
// CHECK-LABEL: func.func @max_bf16_fwd(
// CHECK: %[[Y:.*]], %[[W:.*]] = gnn.spmm max %arg0, %arg1 counted : tensor<?x8xbf16> -> tensor<?x8xbf16>, tensor<?x8xf32>
// CHECK-LABEL: func.func @max_bf16_bwd(
// CHECK: gnn.extremum_grad
func.func @max_bf16(%g: !gnn.graph, %x: tensor<?x8xbf16> {gnn.differentiable}) -> tensor<?x8xbf16> {
  %y = gnn.spmm max %g, %x : tensor<?x8xbf16> -> tensor<?x8xbf16>
  return %y : tensor<?x8xbf16>
}

// -----

// reduce max keeps its winner codes in the forward too (-(c + 1) for the c
// edges attaining the maximum): the backward gives each edge attaining it
// dy / c of its destination.
// CHECK-LABEL: func.func @reduce_max_fwd(
// CHECK: %[[Y:.*]], %[[S:.*]] = gnn.reduce max %arg0, %arg1 : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
// CHECK: return %[[Y]], %arg1, %[[Y]], %[[S]]
// CHECK-LABEL: func.func @reduce_max_bwd(
// CHECK-NOT: gnn.reduce
// CHECK: %[[YE:.*]] = gnn.gather dst %arg0, %arg2
// CHECK: %[[DYE:.*]] = gnn.gather dst %arg0, %arg4
// CHECK: %[[SE:.*]] = gnn.gather dst %arg0, %arg3
// CHECK: %[[DE:.*]] = linalg.generic {{.*}} ins(%arg1, %[[YE]], %[[DYE]], %[[SE]] :
// CHECK: arith.cmpf ueq
// CHECK: arith.addf
// CHECK: arith.negf
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: return %[[DE]]
func.func @reduce_max(%g: !gnn.graph, %e: tensor<?x8xf32> {gnn.differentiable, gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %y = gnn.reduce max %g, %e : tensor<?x8xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// An spmm max that no gradient passes through keeps its single result.
#id_inactive = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @inactive_max_fwd(
// CHECK: gnn.spmm max %arg0, %arg1 : tensor<?x8xf32> -> tensor<?x8xf32>{{$}}
func.func @inactive_max(%g: !gnn.graph, %x: tensor<?x8xf32>, %s: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %y = gnn.spmm max %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %p = linalg.generic {indexing_maps = [#id_inactive, #id_inactive, #id_inactive],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y, %s : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  return %p : tensor<?x8xf32>
}

// -----

// gather and reduce are each other's gradients; a value used twice gets the
// sum of both gradients; an argument no result depends on gets zeros, sized
// from the output gradient (same domain): nothing is kept for a shape alone,
// so the forward has no residual at all.
// CHECK-LABEL: func.func @gather_reduce_fwd(
// CHECK-SAME: -> tensor<?x4xf32> {
// CHECK-LABEL: func.func @gather_reduce_bwd(%arg0: !gnn.graph, %arg1: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: %[[A:.*]] = gnn.gather dst %arg0, %{{.*}} : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: %[[B:.*]] = gnn.reduce sum %arg0, %[[A]] reversed
// CHECK: %[[C:.*]] = gnn.reduce sum %arg0, %[[A]] :
// CHECK: linalg.generic {{.*}} ins(%[[B]], %[[C]]
// CHECK: arith.addf
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: return %{{.*}}, %[[Z]]
func.func @gather_reduce(%g: !gnn.graph, %x: tensor<?x4xf32> {gnn.differentiable}, %unused: tensor<?x4xf32> {gnn.differentiable}) -> tensor<?x4xf32> {
  %s = gnn.gather src %g, %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %d = gnn.gather dst %g, %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %e = gnn.sddmm add %g, %x, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %r = gnn.reduce sum %g, %e : tensor<?x4xf32> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// A broadcast bias: its gradient sums the output gradient over the rows. The
// summed loop is moved after the ones the gradient keeps (parallel loops
// first, as the CUDA backend runs them): loops (f, n) over dy[n, f].
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// The forward computation cloned into the gradient's body is dead there and
// goes, with the inputs only it read: the output gradient is all @bias_bwd
// takes.
// CHECK-LABEL: func.func @bias_bwd(%arg0: tensor<?x4xf32>) -> tensor<4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[DYT:.*]], #[[OUT:.*]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<?x4xf32>)
// CHECK-NOT: arith.addf %in, %in
// CHECK: return
func.func @bias(%x: tensor<?x4xf32>, %b: tensor<4xf32> {gnn.differentiable}) -> tensor<?x4xf32> {
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<?x4xf32>, tensor<4xf32>) outs(%x : tensor<?x4xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// Attention: the softmax's row term sum_{e -> d} a[e] * da[e], with da the
// spmm's weight gradient sddmm dot(v, dout), is D[d] = sum_f dout[d, f] *
// out[d, f]: a node-sized reduction instead of an edge-sized one. The output
// is kept for it (a node tensor), the weights are recomputed.
// CHECK-LABEL: func.func @attention_bwd(
// CHECK-NOT: gnn.domain = "edge"
// CHECK: gnn.spmm sum %arg0, %[[DOUT:arg[0-9]+]] weights({{.*}}) reversed
// CHECK: %[[DA:.*]] = gnn.sddmm dot %arg0, %{{.*}}, %[[DOUT]] : tensor<?x2x4xf32>, tensor<?x2x4xf32> -> tensor<?x2xf32>
// CHECK: %[[D:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DOUT]], %{{.*}} : tensor<?x2x4xf32>, tensor<?x2x4xf32>)
// CHECK: gnn.gather dst %arg0, %[[D]]
// CHECK-NOT: gnn.reduce sum %arg0, %{{.*}} : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK: return
func.func @attention(%g: !gnn.graph, %q: tensor<?x2x4xf32> {gnn.differentiable}, %v: tensor<?x2x4xf32> {gnn.differentiable}) -> tensor<?x2x4xf32> {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x2x4xf32>, tensor<?x2x4xf32> -> tensor<?x2xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>
  %o = gnn.spmm sum %g, %v weights(%a : tensor<?x2xf32>) : tensor<?x2x4xf32> -> tensor<?x2x4xf32>
  return %o : tensor<?x2x4xf32>
}

// -----

// The weights also returned: their gradient sums two contributions, the
// identity does not apply and the edge reduction stays.
// CHECK-LABEL: func.func @attention_weights_returned_bwd(
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: gnn.reduce sum %arg0, %{{.*}} : tensor<?x2xf32> -> tensor<?x2xf32>
func.func @attention_weights_returned(%g: !gnn.graph, %q: tensor<?x2x4xf32> {gnn.differentiable}, %v: tensor<?x2x4xf32> {gnn.differentiable}) -> (tensor<?x2x4xf32>, tensor<?x2xf32>) {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x2x4xf32>, tensor<?x2x4xf32> -> tensor<?x2xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>
  %o = gnn.spmm sum %g, %v weights(%a : tensor<?x2xf32>) : tensor<?x2x4xf32> -> tensor<?x2x4xf32>
  return %o, %a : tensor<?x2x4xf32>, tensor<?x2xf32>
}

// -----

// linalg.matmul: dX = dY Wᵀ and dW = Xᵀ dY, each a linalg.matmul with one
// operand's indexing map transposed (one cuBLAS GEMM each on the GPU, the
// weight gradient's sum over every node included).
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[XT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[DYK:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @dense_bwd(%arg0: !gnn.graph, %arg1: tensor<?x16xf32>, %arg2: tensor<16x8xf32>, %arg3: tensor<?x8xf32>)
// CHECK: %[[DX:.*]] = linalg.matmul indexing_maps = [#[[DY]], #[[WT]], #[[OUT]]] ins(%arg3, %arg2 : tensor<?x8xf32>, tensor<16x8xf32>)
// CHECK: %[[DW:.*]] = linalg.matmul indexing_maps = [#[[XT]], #[[DYK]], #[[OUT]]] ins(%arg1, %arg3 : tensor<?x16xf32>, tensor<?x8xf32>)
// CHECK: return %[[DX]], %[[DW]]
func.func @dense(%g: !gnn.graph, %x: tensor<?x16xf32> {gnn.differentiable}, %w: tensor<16x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %h : tensor<?x8xf32>
}

// -----

// linalg.matmul C += X Wᵀ (W [8, 16], a Linear's weight as stored): dX =
// dY W (the default maps) and dW = dYᵀ X (A transposed: the weight
// gradient's sum over every node, the row split on the GPU).
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @dense_t_bwd(%arg0: !gnn.graph, %arg1: tensor<?x16xf32>, %arg2: tensor<8x16xf32>, %arg3: tensor<?x8xf32>)
// CHECK: %[[DX:.*]] = linalg.matmul ins(%arg3, %arg2 : tensor<?x8xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: %[[DW:.*]] = linalg.matmul indexing_maps = [#[[AT]], #[[B]], #[[C]]] ins(%arg3, %arg1 : tensor<?x8xf32>, tensor<?x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: return %[[DX]], %[[DW]]
func.func @dense_t(%g: !gnn.graph, %x: tensor<?x16xf32> {gnn.differentiable}, %w: tensor<8x16xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<?x16xf32>, tensor<8x16xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %h : tensor<?x8xf32>
}

// -----

// bf16 attention: the softmax's row sum sum_e a[e] * da[e] is f32, in
// rowDot's node-sized form (sum_f dy * y, widened) and in the edge-sized
// form (a returned: a gradient of its own), since `da - sum` cancels; only
// what the ops store is bf16. The backward's maps are marked
// gnn.rounds_on_store: kernels keep their values in f32 until stored.
// CHECK-LABEL: func.func @attention_bf16_bwd(%arg0: !gnn.graph, %arg1: tensor<?x2x8xbf16>, %arg2: tensor<?x2x8xbf16>, %arg3: tensor<?x2x8xbf16>, %arg4: tensor<?x2xf32>, %arg5: tensor<?x2x8xbf16>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%arg5, %arg3 : tensor<?x2x8xbf16>, tensor<?x2x8xbf16>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[G:.*]] = gnn.gather dst %arg0, %[[D]] : tensor<?x2xf32> -> tensor<?x2xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[G]] : tensor<?x2xbf16>, tensor<?x2xf32>) outs(%{{.*}} : tensor<?x2xbf16>) attrs = {gnn.rounds_on_store}
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK-LABEL: func.func @attention_bf16_returned_bwd
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2xf32>)
// CHECK: gnn.reduce sum %arg0, %[[P]] : tensor<?x2xf32> -> tensor<?x2xf32>
func.func @attention_bf16(%g: !gnn.graph, %q: tensor<?x2x8xbf16> {gnn.differentiable}, %v: tensor<?x2x8xbf16> {gnn.differentiable}) -> tensor<?x2x8xbf16> {
  %s = gnn.sddmm dot %g, %q, %v : tensor<?x2x8xbf16>, tensor<?x2x8xbf16> -> tensor<?x2xbf16>
  %a = gnn.edge_softmax %g, %s : tensor<?x2xbf16>
  %y = gnn.spmm sum %g, %v weights(%a : tensor<?x2xbf16>) : tensor<?x2x8xbf16> -> tensor<?x2x8xbf16>
  return %y : tensor<?x2x8xbf16>
}
func.func @attention_bf16_returned(%g: !gnn.graph, %q: tensor<?x2x8xbf16> {gnn.differentiable}, %v: tensor<?x2x8xbf16> {gnn.differentiable}) -> (tensor<?x2x8xbf16>, tensor<?x2xbf16>) {
  %s = gnn.sddmm dot %g, %q, %v : tensor<?x2x8xbf16>, tensor<?x2x8xbf16> -> tensor<?x2xbf16>
  %a = gnn.edge_softmax %g, %s : tensor<?x2xbf16>
  %y = gnn.spmm sum %g, %v weights(%a : tensor<?x2xbf16>) : tensor<?x2x8xbf16> -> tensor<?x2x8xbf16>
  return %y, %a : tensor<?x2x8xbf16>, tensor<?x2xbf16>
}

// -----

// A bf16 weighted max: the recomputed edge values w * x are compared with the
// stored extremum, so their map is not marked gnn.rounds_on_store (rounded
// as the forward's values were); the gradient maps after it are.
// CHECK-LABEL: func.func @max_weighted_bf16_bwd
// CHECK: %[[X:.*]] = gnn.gather src
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%[[X]], %arg2 : tensor<?x4x8xbf16>, tensor<?x4xbf16>) outs(%{{.*}} : tensor<?x4x8xbf16>) {
// CHECK: linalg.generic {{.*}} ins(%[[V]], {{.*}} attrs = {gnn.rounds_on_store}
func.func @max_weighted_bf16(%g: !gnn.graph, %x: tensor<?x4x8xbf16> {gnn.differentiable}, %w: tensor<?x4xbf16> {gnn.domain = "edge", gnn.differentiable}) -> tensor<?x4x8xbf16> {
  %r = gnn.spmm max %g, %x weights(%w : tensor<?x4xbf16>) : tensor<?x4x8xbf16> -> tensor<?x4x8xbf16>
  return %r : tensor<?x4x8xbf16>
}

// -----

// Two projections of x summed: each term of the sum gets dy itself (no
// generic copies it), and x's gradient is a chain of matmuls, the second
// taking the first's result as its init (a GEMM with beta = 1), no
// elementwise sum.
// CHECK-LABEL: func.func @projections_bwd(%arg0: !gnn.graph, %arg1: tensor<4x3xf32>, %arg2: tensor<4x3xf32>, %arg3: tensor<?x3xf32>) -> tensor<?x4xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK-NEXT: %[[D1:.*]] = linalg.matmul {{.*}} ins(%arg3, %arg2 : {{.*}}) outs(%[[Z]] : tensor<?x4xf32>)
// CHECK-NEXT: %[[D2:.*]] = linalg.matmul {{.*}} ins(%arg3, %arg1 : {{.*}}) outs(%[[D1]] : tensor<?x4xf32>)
// CHECK-NEXT: return %[[D2]]
#idp = affine_map<(d0, d1) -> (d0, d1)>
func.func @projections(%g: !gnn.graph, %x: tensor<?x4xf32> {gnn.differentiable}, %w1: tensor<4x3xf32>, %w2: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %a = linalg.matmul ins(%x, %w1 : tensor<?x4xf32>, tensor<4x3xf32>) outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  %b = linalg.matmul ins(%x, %w2 : tensor<?x4xf32>, tensor<4x3xf32>) outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  %s = linalg.generic {indexing_maps = [#idp, #idp, #idp], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<?x3xf32>
  return %s : tensor<?x3xf32>
}
