// RUN: gnn-opt %s -split-input-file --gnn-edge-sums-to-node-sums | FileCheck %s

// GATv2's d`att`: a sum over every edge of per-edge terms becomes the terms
// (all parallel, the edge loop first), their sum per destination and a sum
// over the nodes with the original init.

#e3 = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
#e2 = affine_map<(d0, d1, d2) -> (d2, d0)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @att_gradient
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[E:.*]], %{{.*}} : tensor<?x4x32xf32>, tensor<?x4xf32>) outs(%{{.*}} : tensor<?x4x32xf32>)
// CHECK-NOT: arith.addf
// CHECK: linalg.yield
// CHECK: %[[N:.*]] = gnn.reduce sum %{{.*}}, %[[T]] : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[N]] : tensor<?x4x32xf32>) outs(%{{.*}} : tensor<4x32xf32>)
// CHECK: arith.addf
func.func @att_gradient(%g: !gnn.graph, %a: tensor<?x4x32xf32>, %b: tensor<?x4x32xf32>, %w: tensor<?x4xf32> {gnn.domain = "edge"}) -> tensor<4x32xf32> {
  %e = gnn.sddmm add %g, %a, %b : tensor<?x4x32xf32>, tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  %z = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x32xf32>
  %zero = linalg.fill ins(%z : f32) outs(%init : tensor<4x32xf32>) -> tensor<4x32xf32>
  %r = linalg.generic {indexing_maps = [#e3, #e2, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %w : tensor<?x4x32xf32>, tensor<?x4xf32>) outs(%zero : tensor<4x32xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %m = arith.mulf %x, %s : f32
    %t = arith.addf %out, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// The same sum of bf16 terms (as gnn-autodiff writes it: the product in f32,
// rounded to add it to the bf16 result): the terms and the per-node sums are
// f32, the term not rounded (a node's sum crosses kernels, and the sum over
// the nodes cancels), and the sum over the nodes converts the node sum to add
// it, as the original body did the term, marked gnn.rounds_on_store (the
// kernel adds it in f32; only the stored result is rounded).

#e3 = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
#e2 = affine_map<(d0, d1, d2) -> (d2, d0)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @att_gradient_bf16
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4x32xbf16>, tensor<?x4xbf16>) outs(%{{.*}} : tensor<?x4x32xf32>)
// CHECK: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: f32):
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.truncf
// CHECK: linalg.yield %[[P]] : f32
// CHECK: %[[N:.*]] = gnn.reduce sum %{{.*}}, %[[T]] : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[N]] : tensor<?x4x32xf32>) outs(%{{.*}} : tensor<4x32xbf16>) attrs = {gnn.rounds_on_store}
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: bf16):
// CHECK: %[[R:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK: arith.addf %[[OUT]], %[[R]] : bf16
func.func @att_gradient_bf16(%g: !gnn.graph, %a: tensor<?x4x32xbf16>, %b: tensor<?x4x32xbf16>, %w: tensor<?x4xbf16> {gnn.domain = "edge"}) -> tensor<4x32xbf16> {
  %e = gnn.sddmm add %g, %a, %b : tensor<?x4x32xbf16>, tensor<?x4x32xbf16> -> tensor<?x4x32xbf16>
  %z = arith.constant 0.0 : bf16
  %init = tensor.empty() : tensor<4x32xbf16>
  %zero = linalg.fill ins(%z : bf16) outs(%init : tensor<4x32xbf16>) -> tensor<4x32xbf16>
  %r = linalg.generic {indexing_maps = [#e3, #e2, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %w : tensor<?x4x32xbf16>, tensor<?x4xbf16>) outs(%zero : tensor<4x32xbf16>) {
  ^bb0(%x: bf16, %s: bf16, %out: bf16):
    %xw = arith.extf %x : bf16 to f32
    %sw = arith.extf %s : bf16 to f32
    %m = arith.mulf %xw, %sw : f32
    %mr = arith.truncf %m : f32 to bf16
    %t = arith.addf %out, %mr : bf16
    linalg.yield %t : bf16
  } -> tensor<4x32xbf16>
  return %r : tensor<4x32xbf16>
}

// -----

// Without a graph op producing the edge values there is no graph to reduce
// over, and a sum over nodes is not an edge sum: both stay.

#n2 = affine_map<(d0, d1) -> (d1, d0)>
#o1 = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @no_graph
// CHECK-NOT: gnn.reduce
func.func @no_graph(%e: tensor<?x8xf32> {gnn.domain = "edge"}, %x: tensor<?x8xf32>, %init: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r = linalg.generic {indexing_maps = [#n2, #o1], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<?x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %t = arith.addf %out, %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#n2, #o1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %t = arith.addf %out, %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %r, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// AGNN's d`beta`: a sum over every edge into a tensor<1> written at (d0) -> (0)
// (no parallel loop): the rank-1 terms, their sum per destination, and a sum
// over the nodes into the same position.

#r1 = affine_map<(d0) -> (d0)>
#at0 = affine_map<(d0) -> (0)>
// CHECK-LABEL: func.func @beta_gradient
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK-NOT: arith.addf
// CHECK: linalg.yield
// CHECK: %[[N:.*]] = gnn.reduce sum %{{.*}}, %[[T]] : tensor<?xf32> -> tensor<?xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[AT0:.*]]], iterator_types = ["reduction"]} ins(%[[N]] : tensor<?xf32>) outs(%{{.*}} : tensor<1xf32>)
// CHECK: arith.addf
func.func @beta_gradient(%g: !gnn.graph, %x: tensor<?x8xf32>, %d: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<1xf32> {
  %c = gnn.sddmm dot %g, %x, %x : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
  %z = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1xf32>
  %zero = linalg.fill ins(%z : f32) outs(%init : tensor<1xf32>) -> tensor<1xf32>
  %r = linalg.generic {indexing_maps = [#r1, #r1, #at0], iterator_types = ["reduction"]}
      ins(%c, %d : tensor<?xf32>, tensor<?xf32>) outs(%zero : tensor<1xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %out, %m : f32
    linalg.yield %t : f32
  } -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// -----

// A result at a constant position other than 0 is not a sum this pass knows.

#r1b = affine_map<(d0) -> (d0)>
#at1 = affine_map<(d0) -> (1)>
// CHECK-LABEL: func.func @constant_position
// CHECK-NOT: gnn.reduce
func.func @constant_position(%g: !gnn.graph, %x: tensor<?x8xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  %c = gnn.sddmm dot %g, %x, %x : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#r1b, #at1], iterator_types = ["reduction"]}
      ins(%c : tensor<?xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%a: f32, %out: f32):
    %t = arith.addf %out, %a : f32
    linalg.yield %t : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// GINE's edge projection: the bias gradient Σ_e dE[e] beside the weight
// gradient dEᵀ edge_attr, whose GEMM reads the edge values anyway: its row
// split sums them (gemmRowSumsOf), so the sum stays a sum over the edges.

#n2 = affine_map<(d0, d1) -> (d1, d0)>
#o1 = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @bias_beside_weight_gradient
// CHECK: linalg.matmul
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<?x8xf32>)
// CHECK-NOT: gnn.reduce
// CHECK: return
func.func @bias_beside_weight_gradient(%g: !gnn.graph, %x: tensor<?x8xf32>, %a: tensor<?x4xf32> {gnn.domain = "edge"}) -> (tensor<8x4xf32>, tensor<8xf32>) {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %xs = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %ne = tensor.dim %xs, %c0 : tensor<?x8xf32>
  %ee = tensor.empty(%ne) : tensor<?x8xf32>
  %de = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xs : tensor<?x8xf32>) outs(%ee : tensor<?x8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %t = arith.mulf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  %ew = tensor.empty() : tensor<8x4xf32>
  %fw = linalg.fill ins(%z : f32) outs(%ew : tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%de, %a : tensor<?x8xf32>, tensor<?x4xf32>) outs(%fw : tensor<8x4xf32>) -> tensor<8x4xf32>
  %eb = tensor.empty() : tensor<8xf32>
  %fb = linalg.fill ins(%z : f32) outs(%eb : tensor<8xf32>) -> tensor<8xf32>
  %db = linalg.generic {indexing_maps = [#n2, #o1], iterator_types = ["parallel", "reduction"]}
      ins(%de : tensor<?x8xf32>) outs(%fb : tensor<8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %t = arith.addf %out, %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %dw, %db : tensor<8x4xf32>, tensor<8xf32>
}
