// RUN: gnn-translate --gnn-to-cuda %s | FileCheck %s
// RUN: gnn-translate --gnn-to-program %s | FileCheck %s --check-prefix=PROGRAM

// An edge map without a dot product (a gather's group: gathers and
// element-wise ops on the edge rows) runs a thread per run of 16 bytes of
// its result row (the schedule's vector: 4 f32, 8 bf16, 4 f64 as two
// accesses, else 2 or 1): the edge's indices are loaded once for the run,
// each gathered row and edge tensor is read as one vector, and the run is
// stored as one. The arithmetic per element is the same as a thread per
// element's (GINE's backward edge pass is `mask`).

#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#head = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: void __launch_bounds__(256) edge_map_0(
// CHECK: const long long [[N:v[0-9]+]] = [[E:v[0-9]+]] * 16LL;
// CHECK: if ([[T:i[0-9]+]] < [[N]]) {
// CHECK: = (long long)((unsigned long long)[[T]] / 16ull);
// CHECK: = __ldg(csr_col +
// CHECK: = __ldg(csr_dst +
// CHECK: = __ldg(reinterpret_cast<const float4 *>(in0 +
// CHECK: = __ldg(reinterpret_cast<const float4 *>(in1 +
// CHECK: = __ldg(reinterpret_cast<const float4 *>(in2 +
// CHECK-COUNT-4: <= 0.0f;
// CHECK: const long long [[AT:v[0-9]+]] = [[T]] * 4LL;
// CHECK-NEXT: *reinterpret_cast<float4 *>(out0 + [[AT]]) = make_float4(
// PROGRAM: "kernel": "edge_map_0",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 16), 256)"
func.func @mask(%g: !gnn.graph, %x: tensor<?x64xf32>,
                %e: tensor<?x64xf32> {gnn.domain = "edge"},
                %y: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %xs = gnn.gather src %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %yd = gnn.gather dst %g, %y : tensor<?x64xf32> -> tensor<?x64xf32>
  %n = tensor.dim %e, %c0 : tensor<?x64xf32>
  %o = tensor.empty(%n) : tensor<?x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%xs, %e, %yd : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) outs(%o : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %p = arith.cmpf ole, %s, %zero : f32
    %r = arith.select %p, %zero, %c : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  return %m : tensor<?x64xf32>
}

// 16 bf16: two runs of 8 a row, uint4 loads widened, rounded on the store.
// CHECK-LABEL: void __launch_bounds__(256) half_gather_0(
// CHECK: / 2ull);
// CHECK: = __ldg(reinterpret_cast<const uint4 *>(in0 +
// CHECK: = __ldg(reinterpret_cast<const uint4 *>(in1 +
// CHECK: *reinterpret_cast<uint4 *>(out0 + {{v[0-9]+}}) = make_uint4(gnn_round2_bf16(
func.func @half(%g: !gnn.graph, %x: tensor<?x16xbf16>,
                %e: tensor<?x16xbf16> {gnn.domain = "edge"}) -> tensor<?x16xbf16> {
  %c0 = arith.constant 0 : index
  %xs = gnn.gather src %g, %x : tensor<?x16xbf16> -> tensor<?x16xbf16>
  %n = tensor.dim %e, %c0 : tensor<?x16xbf16>
  %o = tensor.empty(%n) : tensor<?x16xbf16>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%xs, %e : tensor<?x16xbf16>, tensor<?x16xbf16>) outs(%o : tensor<?x16xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %s = arith.mulf %a, %b : bf16
    linalg.yield %s : bf16
  } -> tensor<?x16xbf16>
  return %m : tensor<?x16xbf16>
}

// 6 f32: runs of 2.
// CHECK-LABEL: void __launch_bounds__(256) six_gather_0(
// CHECK: / 3ull);
// CHECK: = __ldg(reinterpret_cast<const float2 *>(in0 +
// CHECK: *reinterpret_cast<float2 *>(out0 +
func.func @six(%g: !gnn.graph, %x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %xs = gnn.gather dst %g, %x : tensor<?x6xf32> -> tensor<?x6xf32>
  return %xs : tensor<?x6xf32>
}

// 3 f32: no vector divides the row, a thread per element.
// CHECK-LABEL: void __launch_bounds__(256) three_gather_0(
// CHECK-NOT: float2
// CHECK: out0[[[T3:i[0-9]+]]] =
func.func @three(%g: !gnn.graph, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %xs = gnn.gather dst %g, %x : tensor<?x3xf32> -> tensor<?x3xf32>
  return %xs : tensor<?x3xf32>
}

// Two heads of 4: a run is one head's features; the head's weight (read
// through a broadcast map) is a scalar read, the features one float4.
// CHECK-LABEL: void __launch_bounds__(256) heads_gather_0(
// CHECK: = __ldg(reinterpret_cast<const float4 *>(in0 +
// CHECK: = __ldg(in1 +
// CHECK: *reinterpret_cast<float4 *>(out0 +
func.func @heads(%g: !gnn.graph, %x: tensor<?x2x4xf32>,
                 %w: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %xs = gnn.gather src %g, %x : tensor<?x2x4xf32> -> tensor<?x2x4xf32>
  %n = tensor.dim %w, %c0 : tensor<?x2xf32>
  %o = tensor.empty(%n) : tensor<?x2x4xf32>
  %m = linalg.generic {indexing_maps = [#id3, #head, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xs, %w : tensor<?x2x4xf32>, tensor<?x2xf32>) outs(%o : tensor<?x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x2x4xf32>
  return %m : tensor<?x2x4xf32>
}

// 8 f64: runs of 4 as two double2 accesses.
// CHECK-LABEL: void __launch_bounds__(256) f64_gather_0(
// CHECK: = __ldg(reinterpret_cast<const double2 *>(in0 + [[P:v[0-9]+]]));
// CHECK-NEXT: = __ldg(reinterpret_cast<const double2 *>(in0 + [[P]] + 2));
func.func @f64(%g: !gnn.graph, %x: tensor<?x8xf64>) -> tensor<?x8xf64> {
  %xs = gnn.gather src %g, %x : tensor<?x8xf64> -> tensor<?x8xf64>
  return %xs : tensor<?x8xf64>
}
