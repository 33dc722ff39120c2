// RUN: gnn-opt %s --gnn-expand-narrow-matmuls -split-input-file | FileCheck %s
// RUN: gnn-opt %s --gnn-expand-narrow-matmuls -split-input-file | gnn-opt -split-input-file > /dev/null

// GINE's edge projection (PyG's Linear: C = b + e Wᵀ, W [8, 4]) read by an
// elementwise op: one map of four products per element and the bias, read
// as its vector; the broadcast that started the GEMM is gone.
#b = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[E0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[E3:.*]] = affine_map<(d0, d1) -> (d0, 3)>
// CHECK-DAG: #[[W0:.*]] = affine_map<(d0, d1) -> (d1, 0)>
// CHECK-DAG: #[[W3:.*]] = affine_map<(d0, d1) -> (d1, 3)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @bias_transposed
// CHECK-SAME: (%[[E:[^:]*]]: tensor<?x4xf32> {gnn.domain = "edge"}, %[[W:[^:]*]]: tensor<8x4xf32>, %[[B:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: %[[O:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[E0]], {{.*}}, #[[E3]], #[[W0]], {{.*}}, #[[W3]], #[[V]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[E]], %[[E]], %[[E]], %[[E]], %[[W]], %[[W]], %[[W]], %[[W]], %[[B]] :
// CHECK-SAME: outs(%[[O]] : tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[A0:[^:]*]]: f32, %[[A1:[^:]*]]: f32, %[[A2:[^:]*]]: f32, %[[A3:[^:]*]]: f32, %[[B0:[^:]*]]: f32, %[[B1:[^:]*]]: f32, %[[B2:[^:]*]]: f32, %[[B3:[^:]*]]: f32, %[[BI:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[A0]], %[[B0]] : f32
// CHECK-NEXT: %[[P1:.*]] = arith.mulf %[[A1]], %[[B1]] : f32
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK-NEXT: %[[P2:.*]] = arith.mulf %[[A2]], %[[B2]] : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[P2]] : f32
// CHECK-NEXT: %[[P3:.*]] = arith.mulf %[[A3]], %[[B3]] : f32
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]], %[[P3]] : f32
// CHECK-NEXT: %[[S4:.*]] = arith.addf %[[S3]], %[[BI]] : f32
// CHECK-NEXT: linalg.yield %[[S4]] : f32
// CHECK: arith.negf
func.func @bias_transposed(%e: tensor<?x4xf32> {gnn.domain = "edge"}, %w: tensor<8x4xf32>, %bias: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %e, %c0 : tensor<?x4xf32>
  %0 = tensor.empty(%n) : tensor<?x8xf32>
  %rows = linalg.generic {indexing_maps = [#b, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%0 : tensor<?x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<?x8xf32>
  %r = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%e, %w : tensor<?x4xf32>, tensor<8x4xf32>) outs(%rows : tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<?x8xf32>) outs(%1 : tensor<?x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.negf %x : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// W as [k, n] (C = e W), started from zeros: two products, nothing added.
// CHECK: affine_map<(d0, d1) -> (0, d1)>
// CHECK-NEXT: affine_map<(d0, d1) -> (1, d1)>
// CHECK-LABEL: func.func @zero_plain
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%arg0, %arg0, %arg1, %arg1 : tensor<?x2xf64>, tensor<?x2xf64>, tensor<2x8xf64>, tensor<2x8xf64>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: %[[S:.*]] = arith.addf
// CHECK-NEXT: linalg.yield %[[S]] : f64
func.func @zero_plain(%e: tensor<?x2xf64> {gnn.domain = "edge"}, %w: tensor<2x8xf64>) -> tensor<?x8xf64> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %e, %c0 : tensor<?x2xf64>
  %0 = tensor.empty(%n) : tensor<?x8xf64>
  %z = linalg.fill ins(%zero : f64) outs(%0 : tensor<?x8xf64>) -> tensor<?x8xf64>
  %r = linalg.matmul ins(%e, %w : tensor<?x2xf64>, tensor<2x8xf64>) outs(%z : tensor<?x8xf64>) -> tensor<?x8xf64>
  %1 = tensor.empty(%n) : tensor<?x8xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<?x8xf64>) outs(%1 : tensor<?x8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %m = arith.negf %x : f64
    linalg.yield %m : f64
  } -> tensor<?x8xf64>
  return %y : tensor<?x8xf64>
}

// -----

// Any other start (here edge values of the caller's) is read per element
// and added last; a single product is the whole sum.
// CHECK-LABEL: func.func @edge_init
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[ID:.*]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%arg0, %arg1, %arg2 : tensor<?x1xf32>, tensor<8x1xf32>, tensor<?x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[P:.*]] = arith.mulf
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[P]],
// CHECK-NEXT: linalg.yield %[[S]] : f32
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @edge_init(%e: tensor<?x1xf32> {gnn.domain = "edge"}, %w: tensor<8x1xf32>, %start: tensor<?x8xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %r = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%e, %w : tensor<?x1xf32>, tensor<8x1xf32>) outs(%start : tensor<?x8xf32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %e, %c0 : tensor<?x1xf32>
  %1 = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<?x8xf32>) outs(%1 : tensor<?x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.negf %x : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Left as GEMMs: a contraction of 9, node rows, rows of unknown domain,
// bf16, a dynamic contraction, and a weight gradient (Aᵀ B over the edges).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-6: linalg.matmul
// CHECK-NOT: linalg.generic
#at = affine_map<(d0, d1, d2) -> (d2, d0)>
#b2 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @kept(%e9: tensor<?x9xf32> {gnn.domain = "edge"}, %w9: tensor<9x8xf32>,
                %x: tensor<?x4xf32> {gnn.domain = "node"}, %u: tensor<?x4xf32>, %w4: tensor<4x8xf32>,
                %h: tensor<?x4xbf16> {gnn.domain = "edge"}, %wh: tensor<4x8xbf16>,
                %d: tensor<?x?xf32> {gnn.domain = "edge"}, %wd: tensor<?x8xf32>,
                %dy: tensor<?x8xf32> {gnn.domain = "edge"}, %e4: tensor<?x4xf32> {gnn.domain = "edge"})
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xbf16>, tensor<?x?xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : bf16
  %n9 = tensor.dim %e9, %c0 : tensor<?x9xf32>
  %i9 = tensor.empty(%n9) : tensor<?x8xf32>
  %z9 = linalg.fill ins(%zero : f32) outs(%i9 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r9 = linalg.matmul ins(%e9, %w9 : tensor<?x9xf32>, tensor<9x8xf32>) outs(%z9 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %nx = tensor.dim %x, %c0 : tensor<?x4xf32>
  %ix = tensor.empty(%nx) : tensor<?x8xf32>
  %zx = linalg.fill ins(%zero : f32) outs(%ix : tensor<?x8xf32>) -> tensor<?x8xf32>
  %rx = linalg.matmul ins(%x, %w4 : tensor<?x4xf32>, tensor<4x8xf32>) outs(%zx : tensor<?x8xf32>) -> tensor<?x8xf32>
  %nu = tensor.dim %u, %c0 : tensor<?x4xf32>
  %iu = tensor.empty(%nu) : tensor<?x8xf32>
  %zu = linalg.fill ins(%zero : f32) outs(%iu : tensor<?x8xf32>) -> tensor<?x8xf32>
  %ru = linalg.matmul ins(%u, %w4 : tensor<?x4xf32>, tensor<4x8xf32>) outs(%zu : tensor<?x8xf32>) -> tensor<?x8xf32>
  %nh = tensor.dim %h, %c0 : tensor<?x4xbf16>
  %ih = tensor.empty(%nh) : tensor<?x8xbf16>
  %zhh = linalg.fill ins(%zh : bf16) outs(%ih : tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %rh = linalg.matmul ins(%h, %wh : tensor<?x4xbf16>, tensor<4x8xbf16>) outs(%zhh : tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %nd = tensor.dim %d, %c0 : tensor<?x?xf32>
  %id = tensor.empty(%nd) : tensor<?x8xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%id : tensor<?x8xf32>) -> tensor<?x8xf32>
  %rd = linalg.matmul ins(%d, %wd : tensor<?x?xf32>, tensor<?x8xf32>) outs(%zd : tensor<?x8xf32>) -> tensor<?x8xf32>
  %iw = tensor.empty() : tensor<8x4xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%iw : tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = linalg.matmul indexing_maps = [#at, #b2, #c] ins(%dy, %e4 : tensor<?x8xf32>, tensor<?x4xf32>) outs(%zw : tensor<8x4xf32>) -> tensor<8x4xf32>
  // (Read by casts, not returned: a returned product stays a GEMM anyway.)
  %c9 = tensor.cast %r9 : tensor<?x8xf32> to tensor<?x?xf32>
  %cx = tensor.cast %rx : tensor<?x8xf32> to tensor<?x?xf32>
  %cu = tensor.cast %ru : tensor<?x8xf32> to tensor<?x?xf32>
  %ch = tensor.cast %rh : tensor<?x8xbf16> to tensor<?x?xbf16>
  %cd = tensor.cast %rd : tensor<?x8xf32> to tensor<?x?xf32>
  %cw = tensor.cast %dw : tensor<8x4xf32> to tensor<?x4xf32>
  return %c9, %cx, %cu, %ch, %cd, %cw : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xbf16>, tensor<?x?xf32>, tensor<?x4xf32>
}

// -----

// A narrow edge product the function returns (a result, or a training
// forward's residual) is written either way: it stays a GEMM.
// CHECK-LABEL: func.func @returned
// CHECK: linalg.matmul
// CHECK-NOT: linalg.generic
func.func @returned(%e: tensor<?x4xf32> {gnn.domain = "edge"}, %w: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %e, %c0 : tensor<?x4xf32>
  %0 = tensor.empty(%n) : tensor<?x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = linalg.matmul ins(%e, %w : tensor<?x4xf32>, tensor<4x8xf32>) outs(%z : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
